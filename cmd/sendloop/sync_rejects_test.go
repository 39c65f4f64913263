package main

import (
	"encoding/csv"
	"path/filepath"
	"strings"
	"testing"
)

// TestSyncRejectsMalformedAddressAsWritten: a rejected line is reported with the text of
// its address column as written, also when the CSV reader could not split it into fields;
// a line of the wrong length without an address, with its text.
func TestSyncRejectsMalformedAddressAsWritten(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, line, want string
	}{
		{"bare quote", `bo"b@example.com,Bob,free`, `bo"b@example.com`},
		{"too few fields", "erin@example.com,Erin", "erin@example.com"},
		{"too many fields", "finn@example.com,Finn,free,extra", "finn@example.com"},
		{"no address, too few fields", ",Nobody", ",Nobody"},
		{"semicolon file, no address", "x", "x;y"}, // the line: its address column may be shifted
		{"unterminated quote", `"gil@example.com,Gil,free`, "gil@example.com"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake(t)
			dir := t.TempDir()
			header, line := "EmailAddress,First name,Plan\n", tt.line
			if tt.name == "semicolon file, no address" {
				header, line = "EmailAddress;First name;Plan\n", "x;y"
			}
			csvPath := writeFile(t, dir, "m.csv", header+line+"\n")
			rejects := filepath.Join(dir, "rejects.csv")
			r := f.sendloop(t, "sync", "--list", "1", "--csv", csvPath, "--rejects", rejects)
			expect(t, r, exitFailure, nil, []string{"1 row was rejected"})
			recs, err := csv.NewReader(strings.NewReader(readFile(t, rejects))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2 || recs[1][0] != "2" || recs[1][1] != tt.want {
				t.Errorf("rejects %q, want line 2 with the address %q", recs, tt.want)
			}
		})
	}
}
