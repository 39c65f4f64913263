package wire

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSpecialBytes checks the eight-byte test against strPlain: its lowest flag must be the
// first byte that is not plain, for every byte value at every position of a plain word, for
// words of two special bytes, and for random words.
func TestSpecialBytes(t *testing.T) {
	t.Parallel()
	check := func(b [8]byte) {
		t.Helper()
		first := 8
		for i, c := range b {
			if !strPlain[c] {
				first = i
				break
			}
		}
		m := specialBytes(binary.LittleEndian.Uint64(b[:]))
		if got := bits.TrailingZeros64(m) >> 3; got != first {
			t.Fatalf("specialBytes(%q) = %#x: first special byte %d, want %d", b, m, got, first)
		}
	}
	plain := [8]byte{'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'}
	check(plain)
	for c := 0; c < 256; c++ {
		for at := 0; at < 8; at++ {
			w := plain
			w[at] = byte(c)
			check(w)
			for c2 := 0; c2 < 256; c2 += 7 {
				for at2 := at + 1; at2 < 8; at2++ {
					w2 := w
					w2[at2] = byte(c2)
					check(w2)
				}
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], r.Uint64())
		for j := range b {
			if r.IntN(2) == 0 {
				b[j] = byte('a' + r.IntN(26)) // mostly plain, as text is
			}
		}
		check(b)
	}
}

// decodeScalars reads the elements of a JSON array with a Decoder, as String and as Date.
func decodeScalars(data []byte) (strs []string, strErrs []error, dates []string, err error) {
	err = Decode(data, func(d *Decoder) error {
		return d.Array(func() error {
			mark := d.Offset()
			s, serr := d.String()
			strs, strErrs = append(strs, s), append(strErrs, serr)
			d.Seek(mark)
			t, derr := d.Date()
			if derr != nil {
				dates = append(dates, "error")
			} else {
				dates = append(dates, t.String())
			}
			d.Seek(mark)
			return d.Skip()
		})
	})
	return strs, strErrs, dates, err
}

// FuzzDecoderScalars checks the Decoder's String and Date, which keep strings in shared
// buffers and remember the last date, against String and Date on each element alone.
func FuzzDecoderScalars(f *testing.F) {
	f.Add(`["a@example.com","2026-11-24","2026-11-24","Zoë","a\/b","\u00e9",null,12,"2026-11-25"]`)
	f.Add("[\"\xff\xfe\",\"" + strings.Repeat("x", 300) + "\",\"0000-00-00\",\"2026-02-30\",\"2026-02-30\"]")
	f.Add(`{"a":"1","b":"2026-01-01 10:00:00","c":"2026-01-01","d":"2026-01-01"}`)
	f.Fuzz(func(t *testing.T, doc string) {
		strs, strErrs, dates, err := decodeScalars([]byte(doc))
		if err != nil {
			return
		}
		i := 0
		_ = ScanArray([]byte(doc), func(elem []byte) error {
			want, werr := String(elem)
			if (werr == nil) != (strErrs[i] == nil) || want != strs[i] {
				t.Fatalf("element %d %s: Decoder.String = %q, %v; String = %q, %v", i, elem, strs[i], strErrs[i], want, werr)
			}
			wantDate := "error"
			if d, err := Date(elem); err == nil {
				wantDate = d.String()
			}
			if dates[i] != wantDate {
				t.Fatalf("element %d %s: Decoder.Date = %s; Date = %s", i, elem, dates[i], wantDate)
			}
			i++
			return nil
		})
		if i != len(strs) {
			t.Fatalf("ScanArray saw %d elements, the Decoder %d", i, len(strs))
		}
	})
}
