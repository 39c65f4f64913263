package wire

import (
	"encoding/binary"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestHasSpecialByte checks the eight-byte test against strPlain: every byte value at every
// position of a plain word, and random words.
func TestHasSpecialByte(t *testing.T) {
	t.Parallel()
	plain := []byte("abcdefgh")
	for c := 0; c < 256; c++ {
		for at := 0; at < 8; at++ {
			w := append([]byte(nil), plain...)
			w[at] = byte(c)
			if got := hasSpecialByte(binary.LittleEndian.Uint64(w)); got != !strPlain[c] {
				t.Fatalf("hasSpecialByte(%q) = %v", w, got)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		w := r.Uint64()
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		special := false
		for _, c := range b {
			special = special || !strPlain[c]
		}
		if special && !hasSpecialByte(w) {
			t.Fatalf("hasSpecialByte(%q) = false", b)
		}
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
