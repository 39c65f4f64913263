package personalize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

type renderer struct {
	buf      []byte
	root     any // %KEY% tags look only here
	stack    []any
	partials map[string][]node
	indent   string // prepended to each line of the partial being rendered
	depth    int    // partials being rendered
}

func (r *renderer) run(nodes []node) error {
	r.buf = r.buf[:0]
	r.stack = append(r.stack[:0], r.root)
	return r.render(nodes)
}

func (r *renderer) render(nodes []node) error {
	for i := range nodes {
		n := &nodes[i]
		switch n.kind {
		case nodeText:
			r.text(n)
		case nodeIndent:
			r.buf = append(r.buf, r.indent...)
		case nodeEscaped:
			r.value(r.lookup(n.name), true)
		case nodeRaw:
			r.value(r.lookup(n.name), false)
		case nodeSection:
			if err := r.section(n); err != nil {
				return err
			}
		case nodeInverted:
			if !truthy(r.lookup(n.name)) {
				if err := r.render(n.children); err != nil {
					return err
				}
			}
		case nodePartial:
			if err := r.partial(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// text writes literal text, replacing the %KEY% candidates whose key is in
// the root vars. Candidates are taken leftmost first and never overlap a
// replacement already made, which is what strings.Replacer would do with the
// same keys.
func (r *renderer) text(n *node) {
	s := n.text
	last := 0
	for _, m := range n.merges {
		if m.start < last {
			continue
		}
		v, ok := lookupKey(r.root, s[m.start:m.end])
		if !ok {
			continue
		}
		r.buf = append(r.buf, s[last:m.start]...)
		r.value(v, false)
		last = m.end
	}
	r.buf = append(r.buf, s[last:]...)
}

func (r *renderer) section(n *node) error {
	v := r.lookup(n.name)
	switch l := v.(type) {
	case []any:
		for _, e := range l {
			if err := r.with(e, n.children); err != nil {
				return err
			}
		}
		return nil
	case []map[string]any:
		for _, e := range l {
			if err := r.with(e, n.children); err != nil {
				return err
			}
		}
		return nil
	case []string:
		for _, e := range l {
			if err := r.with(e, n.children); err != nil {
				return err
			}
		}
		return nil
	case map[string]any:
		if l == nil {
			return nil
		}
		return r.with(l, n.children)
	case []byte:
		// Treated as a string, like everywhere else.
	default:
		if rv, ok := listValue(v); ok {
			for i := 0; i < rv.Len(); i++ {
				if err := r.with(rv.Index(i).Interface(), n.children); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if !truthy(v) {
		return nil
	}
	return r.with(v, n.children)
}

// with renders nodes with v pushed on the context stack.
func (r *renderer) with(v any, nodes []node) error {
	r.stack = append(r.stack, v)
	err := r.render(nodes)
	r.stack[len(r.stack)-1] = nil
	r.stack = r.stack[:len(r.stack)-1]
	return err
}

func (r *renderer) partial(n *node) error {
	p, ok := r.partials[n.text]
	if !ok {
		return nil
	}
	if r.depth >= maxPartialDepth {
		return errPartialDepth
	}
	saved := r.indent
	if n.indent != "" {
		r.indent = saved + n.indent
	}
	r.depth++
	err := r.render(p)
	r.depth--
	r.indent = saved
	return err
}

// lookup resolves a name against the context stack: the first part in the
// innermost context that has it as a key, the other parts each in the value
// found for the previous one. A miss anywhere yields nil.
func (r *renderer) lookup(name []string) any {
	if name == nil {
		return r.stack[len(r.stack)-1]
	}
	for i := len(r.stack) - 1; i >= 0; i-- {
		v, ok := lookupKey(r.stack[i], name[0])
		if !ok {
			continue
		}
		for _, part := range name[1:] {
			if v, ok = lookupKey(v, part); !ok {
				return nil
			}
		}
		return v
	}
	return nil
}

// lookupKey looks key up in ctx if ctx is a map with string keys. Presence
// matters, not the value: a key holding nil stops the search up the stack.
func lookupKey(ctx any, key string) (any, bool) {
	switch m := ctx.(type) {
	case map[string]any:
		v, ok := m[key]
		return v, ok
	case map[string]string:
		v, ok := m[key]
		return v, ok
	case nil, string, bool, float64, int, []any:
		return nil, false
	}
	rv := indirect(reflect.ValueOf(ctx))
	if rv.Kind() != reflect.Map || rv.Type().Key().Kind() != reflect.String {
		return nil, false
	}
	e := rv.MapIndex(reflect.ValueOf(key).Convert(rv.Type().Key()))
	if !e.IsValid() {
		return nil, false
	}
	return e.Interface(), true
}

// indirect follows pointers and interfaces; it stops at a nil one, and after
// a few steps, since a pointer can point to itself through an interface.
func indirect(rv reflect.Value) reflect.Value {
	for i := 0; i < 16 && (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface) && !rv.IsNil(); i++ {
		rv = rv.Elem()
	}
	return rv
}

// listValue reports whether v is a slice or array (other than []byte), which
// a section iterates.
func listValue(v any) (reflect.Value, bool) {
	if v == nil {
		return reflect.Value{}, false
	}
	rv := indirect(reflect.ValueOf(v))
	switch rv.Kind() {
	case reflect.Slice:
		return rv, rv.Type().Elem().Kind() != reflect.Uint8
	case reflect.Array:
		return rv, true
	}
	return rv, false
}

// truthy decides whether a section renders. It follows JavaScript, as
// mustache.js does: nil, false, 0, NaN, "" and empty lists are false; any
// map, even empty, is true, except a nil one, which stands for no value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case float64:
		return x != 0 && !math.IsNaN(x)
	case int:
		return x != 0
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return x != ""
		}
		return f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return x != nil
	case map[string]string:
		return x != nil
	case []byte:
		return len(x) > 0
	}
	rv := indirect(reflect.ValueOf(v))
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.String, reflect.Slice, reflect.Array:
		return rv.Len() > 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int() != 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint() != 0
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		return f != 0 && !math.IsNaN(f)
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Func, reflect.Chan:
		return !rv.IsNil()
	}
	return true
}

// value writes v as text, HTML-escaped when escape is set.
func (r *renderer) value(v any, escape bool) {
	switch x := v.(type) {
	case nil:
	case string:
		r.str(x, escape)
	case bool:
		r.buf = strconv.AppendBool(r.buf, x)
	case float64:
		r.buf = appendFloat(r.buf, x, 64)
	case float32:
		r.buf = appendFloat(r.buf, float64(x), 32)
	case int:
		r.buf = strconv.AppendInt(r.buf, int64(x), 10)
	case int64:
		r.buf = strconv.AppendInt(r.buf, x, 10)
	case int32:
		r.buf = strconv.AppendInt(r.buf, int64(x), 10)
	case uint:
		r.buf = strconv.AppendUint(r.buf, uint64(x), 10)
	case uint64:
		r.buf = strconv.AppendUint(r.buf, x, 10)
	case json.Number:
		r.number(x, escape)
	case []byte:
		r.str(string(x), escape)
	case fmt.Stringer:
		// A nil pointer whose type has a value-receiver String method
		// would panic when called.
		if rv := reflect.ValueOf(x); rv.Kind() == reflect.Pointer && rv.IsNil() {
			return
		}
		r.str(x.String(), escape)
	default:
		r.other(v, escape)
	}
}

// other handles named scalar types through reflection and prints composite
// values (maps, lists, structs) as JSON.
func (r *renderer) other(v any, escape bool) {
	rv := indirect(reflect.ValueOf(v))
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface:
		// A nil pointer prints like nil.
		return
	case reflect.Bool:
		r.buf = strconv.AppendBool(r.buf, rv.Bool())
		return
	case reflect.String:
		r.str(rv.String(), escape)
		return
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		r.buf = strconv.AppendInt(r.buf, rv.Int(), 10)
		return
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		r.buf = strconv.AppendUint(r.buf, rv.Uint(), 10)
		return
	case reflect.Float32:
		r.buf = appendFloat(r.buf, rv.Float(), 32)
		return
	case reflect.Float64:
		r.buf = appendFloat(r.buf, rv.Float(), 64)
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // escaping, if any, is done below for HTML
	if err := enc.Encode(rv.Interface()); err != nil {
		// Functions, channels, complex numbers, cycles: nothing sensible
		// to print, and fmt would loop forever on a cycle.
		return
	}
	r.str(string(bytes.TrimSuffix(b.Bytes(), []byte("\n"))), escape)
}

// number prints a json.Number (from a decoder with UseNumber) like the
// float64 it stands for, so that 1.210 prints 1.21 either way; integer
// literals are kept verbatim, as they are exact beyond 2^53.
func (r *renderer) number(n json.Number, escape bool) {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			r.buf = appendFloat(r.buf, f, 64)
			return
		}
	}
	r.str(s, escape)
}

func (r *renderer) str(s string, escape bool) {
	if escape {
		r.buf = appendEscaped(r.buf, s)
	} else {
		r.buf = append(r.buf, s...)
	}
}

// appendFloat formats f the way encoding/json does: the shortest
// representation that reads back the same (1.21, not 1.210000), integers
// without a fraction (85), exponents only for very large or small values.
func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.AppendFloat(b, f, 'g', -1, bits)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// 1e-07 becomes 1e-7, as in JSON.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendEscaped escapes the four characters the Mustache specification names
// (& " < >) and also the single quote, so that a value is safe inside a
// single-quoted HTML attribute too.
func appendEscaped(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '"':
			esc = "&quot;"
		case '\'':
			esc = "&#39;"
		default:
			continue
		}
		b = append(b, s[last:i]...)
		b = append(b, esc...)
		last = i + 1
	}
	return append(b, s[last:]...)
}
