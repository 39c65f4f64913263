package csvfile

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

// benchQuotedFile is benchFile as a spreadsheet saves it when its names hold the
// delimiter: quoted, with CRLF line ends, and a quoted line break in every tenth row.
func benchQuotedFile() []byte {
	var b bytes.Buffer
	b.WriteString("EmailAddress,First name,Plan\r\n")
	for i := 0; i < 10000; i++ {
		if i%10 == 0 {
			fmt.Fprintf(&b, "user%06d@example.com,\"Name, %d\r\nsecond line\",pro\r\n", i, i)
			continue
		}
		fmt.Fprintf(&b, "user%06d@example.com,\"Name, %d\",pro\r\n", i, i)
	}
	return b.Bytes()
}

// BenchmarkReader reads a file through Reader and Record.Address: the cost of the
// detection, the record's text and the address checks. "plain" takes the fast path; "parser" reads the
// same file through the parser of quoted lines alone, the fast path's baseline; "quoted"
// reads a file whose every line needs the parser. BenchmarkReaderBaseline is the same
// files read by encoding/csv alone, BenchmarkReaderRecords by Reader alone.
func BenchmarkReader(b *testing.B) { benchmarkReader(b, true) }

// BenchmarkReaderRecords is BenchmarkReader without Record.Address: the reader's own cost,
// to compare with BenchmarkReaderBaseline's.
func BenchmarkReaderRecords(b *testing.B) { benchmarkReader(b, false) }

func benchmarkReader(b *testing.B, checked bool) {
	plain, quoted := benchFile(), benchQuotedFile()
	for _, bb := range []struct {
		name       string
		data       []byte
		noFastPath bool
	}{{"plain", plain, false}, {"parser", plain, true}, {"quoted", quoted, false}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.data)))
			for i := 0; i < b.N; i++ {
				r, err := NewReader(bytes.NewReader(bb.data))
				if err != nil {
					b.Fatal(err)
				}
				r.noFastPath = bb.noFastPath
				for {
					rec, err := r.Read()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil || rec.Err != nil {
						b.Fatal(err, rec.Err)
					}
					if !checked {
						continue
					}
					if a := rec.Address(0, len(r.Header)); a.Reject != "" {
						b.Fatal(a.Reject)
					}
				}
			}
		})
	}
}

// BenchmarkReaderBaseline reads BenchmarkReader's files with encoding/csv alone.
func BenchmarkReaderBaseline(b *testing.B) {
	for _, bb := range []struct {
		name string
		data []byte
	}{{"plain", benchFile()}, {"quoted", benchQuotedFile()}} {
		b.Run(bb.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bb.data)))
			for i := 0; i < b.N; i++ {
				cr := csv.NewReader(bytes.NewReader(bb.data))
				cr.ReuseRecord = true
				for {
					if _, err := cr.Read(); errors.Is(err, io.EOF) {
						break
					}
				}
			}
		})
	}
}
