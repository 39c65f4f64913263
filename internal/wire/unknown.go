package wire

import "sync/atomic"

// unknownField holds the hook of SetUnknownFieldHook, or nil (the default). The generated
// record decoders load it only for a key they do not read, so a known key costs nothing and
// an unknown one an atomic load beside the skipping of its value.
var unknownField atomic.Pointer[func(record, key string)]

// SetUnknownFieldHook makes the generated record decoders call fn with the record type's
// name and every key of an answer that they do not read, as they meet it; nil, the default,
// reports nothing. It returns the hook it replaces. fn may be called from many goroutines at
// once and must not keep the decoder waiting: it is a test's and a debugger's view of what
// the service sends beyond what the SDK knows (the live smoke suite logs these keys).
func SetUnknownFieldHook(fn func(record, key string)) (previous func(record, key string)) {
	var p *func(record, key string)
	if fn != nil {
		p = &fn
	}
	if old := unknownField.Swap(p); old != nil {
		return *old
	}
	return nil
}

// UnknownField reports a key that the decoder of record does not read to the hook of
// SetUnknownFieldHook, if one is set.
func UnknownField(record string, key []byte) {
	if fn := unknownField.Load(); fn != nil {
		(*fn)(record, string(key))
	}
}
