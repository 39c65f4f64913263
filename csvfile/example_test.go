package csvfile_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/go-sendloop/sendloop/csvfile"
)

// Read a file as Excel saves it with a semicolon: the "sep=" line, a quoted value holding a
// CRLF line break, and a malformed record that does not stop the reading.
func Example() {
	file := "sep=;\r\nEmail;Note\r\nann@example.com;\"two\r\nlines\"\r\nb\"ob@example.com;x\r\ncat@example.com;ok\r\n"
	r, err := csvfile.NewReader(strings.NewReader(file))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("delimiter %q, sep line %t, %s, header %q\n", r.Comma, r.SepLine, r.Encoding, r.Header)
	for {
		rec, err := r.Read()
		if err != nil {
			break // io.EOF
		}
		if rec.Err != nil {
			fmt.Printf("line %d: %v: %q\n", rec.Line, rec.Err, rec.Text)
			continue
		}
		fmt.Printf("line %d: %q\n", rec.Line, rec.Fields)
	}
	// Output:
	// delimiter ';', sep line true, utf-8, header ["Email" "Note"]
	// line 3: ["ann@example.com" "two\r\nlines"]
	// line 5: bare " in non-quoted-field: "b\"ob@example.com;x"
	// line 6: ["cat@example.com" "ok"]
}

// Read a recipient file by column name: the address, and every other column.
func ExampleReader_Named() {
	r, err := csvfile.NewReader(strings.NewReader("Name,Email Address,Coupon\nAnn, ann@example.com ,A1\nBob,bob@,B2\n"))
	if err != nil {
		log.Fatal(err)
	}
	col, err := csvfile.AddressColumn(r.Header, nil)
	if err != nil {
		log.Fatal(err)
	}
	for rec, err := range r.Named(col) {
		if err != nil {
			log.Fatal(err)
		}
		if rec.Reject != "" {
			fmt.Printf("line %d %q: %s\n", rec.Line, rec.Raw, rec.Reject)
			continue
		}
		fmt.Printf("line %d %s: %s, %s\n", rec.Line, rec.Address, rec.Columns["Name"], rec.Columns["Coupon"])
	}
	// Output:
	// line 2 ann@example.com: Ann, A1
	// line 3 "bob@": invalid email address
}
