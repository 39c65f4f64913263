package sendloop

import "github.com/go-sendloop/sendloop/internal/wire"

// record is a record type that reads itself at a wire.Decoder's cursor: the generated
// decoders (zz_decoders_gen.go) and the hand-written irregular ones.
type record[T any] interface {
	*T
	decodeWire(d *wire.Decoder) error
}

// decodeRecords is the one member decoder of every collection (browse, search, data,
// exports, lists): an array of records at the cursor, or an object of them (PHP's habit
// with a list that has gaps), read in the same pass as the answer.
func decodeRecords[T any, PT record[T]](d *wire.Decoder) ([]T, error) {
	return appendRecords[T, PT](d, nil)
}

// appendRecords is decodeRecords appending to out: a caller that knows how many records
// to expect gives it their room.
func appendRecords[T any, PT record[T]](d *wire.Decoder, out []T) ([]T, error) {
	err := d.Array(func() error {
		out = append(out, *new(T))
		return PT(&out[len(out)-1]).decodeWire(d)
	})
	return out, err
}

// recordsFrom is decodeRecords for a value on its own.
func recordsFrom[T any, PT record[T]](value []byte) ([]T, error) {
	var out []T
	err := wire.Decode(value, func(d *wire.Decoder) (err error) {
		out, err = decodeRecords[T, PT](d)
		return err
	})
	return out, err
}

// member reads the member named name with decode and leaves every other member: a reader
// for Client.doWire.
func member(name string, decode func(d *wire.Decoder) error) func(key []byte, d *wire.Decoder) error {
	return func(key []byte, d *wire.Decoder) error {
		if string(key) != name {
			return nil
		}
		return decode(d)
	}
}

// rawDecodeWire reads a hand-written record with its UnmarshalJSON: the irregular shapes
// (pairs, joined objects) take their value whole.
func rawDecodeWire(d *wire.Decoder, unmarshal func([]byte) error) error {
	raw, err := d.Raw()
	if err != nil {
		return err
	}
	return unmarshal(raw)
}

func (r *SubscriberSearchResult) decodeWire(d *wire.Decoder) error {
	return rawDecodeWire(d, r.UnmarshalJSON)
}
func (a *SuppressedAddress) decodeWire(d *wire.Decoder) error {
	return rawDecodeWire(d, a.UnmarshalJSON)
}
func (c *SpamComplaint) decodeWire(d *wire.Decoder) error { return rawDecodeWire(d, c.UnmarshalJSON) }
