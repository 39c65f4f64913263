package listsync

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"testing"
)

// benchFile is a 10,000-row subscriber CSV.
func benchFile() []byte {
	var b bytes.Buffer
	b.WriteString("EmailAddress,First name,Plan\n")
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&b, "user%06d@example.com,Name %d,pro\n", i, i)
	}
	return b.Bytes()
}

// BenchmarkReader reads a file through Reader and a Mapping: the cost of the detection,
// the kept first line of each record and the row checks. "csv" reads every record through
// encoding/csv, as Reader did before readPlain: the baseline of "plain".
func BenchmarkReader(b *testing.B) {
	data := benchFile()
	for _, bb := range []struct {
		name       string
		noFastPath bool
	}{{"plain", false}, {"csv", true}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				r.noFastPath = bb.noFastPath
				m, err := MapHeader(r.Header, []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}})
				if err != nil {
					b.Fatal(err)
				}
				for {
					rec, err := r.Read()
					if errors.Is(err, io.EOF) {
						break
					}
					if row := m.Row(rec); row.Reject != "" {
						b.Fatal(row.Reject)
					}
				}
			}
		})
	}
}

// BenchmarkReaderBaseline reads the same file with encoding/csv alone.
func BenchmarkReaderBaseline(b *testing.B) {
	data := benchFile()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		cr := csv.NewReader(bytes.NewReader(data))
		cr.ReuseRecord = true
		for {
			if _, err := cr.Read(); errors.Is(err, io.EOF) {
				break
			}
		}
	}
}
