package wire

import (
	"errors"
	"slices"
	"testing"
)

type readMember struct {
	key, text string
	n         int64
	textErr   bool
	nErr      bool
}

// walkWithScan reads every readMember as a string and an integer, the old way.
func walkWithScan(data []byte) ([]readMember, error) {
	var out []readMember
	err := ScanObject(data, func(key, v []byte) error {
		s, serr := String(v)
		n, nerr := Int64(v)
		out = append(out, readMember{string(key), s, n, serr != nil, nerr != nil})
		return nil
	})
	return out, err
}

// walkWithDecoder reads the same in one pass: the string with a first decoder, the integer
// with a second one (a value is read once per walk).
func walkWithDecoder(data []byte) ([]readMember, error) {
	var out []readMember
	err := Decode(data, func(d *Decoder) error {
		return d.Object(func(key []byte) error {
			s, err := d.String()
			out = append(out, readMember{key: string(key), text: s, textErr: err != nil})
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	i := 0
	err = Decode(data, func(d *Decoder) error {
		return d.Object(func([]byte) error {
			n, err := d.Int64()
			out[i].n, out[i].nErr = n, err != nil
			i++
			return nil
		})
	})
	return out, err
}

func TestDecoderMatchesScanObject(t *testing.T) {
	t.Parallel()
	for _, s := range jsonSeeds {
		checkDecoder(t, []byte(s))
	}
}

func FuzzDecoder(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecoder)
}

// checkDecoder requires the Decoder to read exactly what ScanObject and the converters read,
// and to refuse what they refuse.
func checkDecoder(t *testing.T, data []byte) {
	want, wantErr := walkWithScan(data)
	got, err := walkWithDecoder(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: Decoder error %v, ScanObject error %v", data, err, wantErr)
	}
	if err != nil {
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Fatalf("%q: error %v is no *SyntaxError", data, err)
		}
		return
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%q:\nDecoder    %+v\nScanObject %+v", data, got, want)
	}
}

func TestDecoderArrayAndRaw(t *testing.T) {
	t.Parallel()
	data := []byte(`{"a":[1,"2",{"x":3}],"b":{"0":"p","1":"q"},"c":null,"d":{"k":[true]},"e":[4,"5"]}`)
	var ints []int
	var strs []string
	var raw string
	err := Decode(data, func(d *Decoder) error {
		return d.Object(func(key []byte) error {
			switch string(key) {
			case "a":
				return nil // left unread: skipped whole
			case "b", "c": // an object read as an array; null as an empty one
				return d.Array(func() error {
					s, err := d.String()
					strs = append(strs, s)
					return err
				})
			case "d":
				r, err := d.Raw()
				raw = string(r)
				return err
			case "e":
				return d.Array(func() error {
					n, err := d.Int()
					ints = append(ints, n)
					return err
				})
			}
			return nil
		})
	})
	if err != nil || !slices.Equal(strs, []string{"p", "q"}) || raw != `{"k":[true]}` || !slices.Equal(ints, []int{4, 5}) {
		t.Fatalf("err %v, strings %v, raw %q, ints %v", err, strs, raw, ints)
	}
	err = Decode([]byte(`{"a":[{"x":1}]}`), func(d *Decoder) error {
		return d.Object(func([]byte) error {
			return d.Array(func() error { _, err := d.Int(); return err })
		})
	})
	if err == nil {
		t.Fatal("an object read as an integer")
	}
	if err := Decode([]byte(`{"a":1} x`), func(d *Decoder) error { return d.Object(func([]byte) error { return nil }) }); err == nil {
		t.Fatal("data after the value accepted")
	}
}
