package mailmerge

import (
	"fmt"
	"github.com/stretchr/testify/assert"
	"math"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/smtp"
)

func TestShard(t *testing.T) {
	t.Parallel()
	// Fixed values: the hash must never change, or a rerun of a CI matrix
	// would send some rows twice and others never.
	tests := []struct {
		address string
		n, want int
	}{
		{"ann@example.com", 1, 0},
		{"ann@example.com", 3, Shard("ANN@Example.com", 3)},
		{"  Ann@Example.COM\t", 8, Shard("ann@example.com", 8)},
		// The CLI cleans CSV addresses with sendloop.NormalizeAddress: a Go job must split
		// the raw field the same way.
		{"\ufeff\u200bann@example.com\u00a0", 8, Shard("ann@example.com", 8)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Shard(tt.address, tt.n), "Shard(%q, %d)", tt.address, tt.n)
	}
	golden := map[string][3]int{ // shards for n = 2, 3, 8
		"ann@example.com": {1, 1, 5},
		"bob@example.net": {1, 1, 7},
		"zoë@exämple.de":  {1, 1, 5},
	}
	for addr, want := range golden {
		for i, n := range []int{2, 3, 8} {
			got := Shard(addr, n)
			assert.Equal(t, want[i], got, "Shard(%q, %d)", addr, n)
			assert.Equal(t, smtpShardGolden(addr, n), got, "Shard(%q, %d), as sendloop 0.4.0's smtp.Shard", addr, n)
		}
	}
	// Every address in exactly one shard, and the shards about even.
	for _, n := range []int{1, 3, 8} {
		counts := make([]int, n)
		for i := range 8000 {
			s := Shard(fmt.Sprintf("user%d@example.net", i), n)
			if s < 0 || s >= n {
				t.Fatalf("Shard(_, %d) = %d", n, s)
			}
			counts[s]++
		}
		for k, c := range counts {
			if math.Abs(float64(c)-8000/float64(n)) > 0.1*8000/float64(n) {
				t.Errorf("n = %d: shard %d has %d of 8000", n, k, c)
			}
		}
	}
	assert.Panics(t, func() { Shard("ann@example.com", 0) }, "Shard(_, 0)")
}

// smtpShardGolden is FNV-1a 64 of the lower-cased address modulo n,
// written out here so that a change of Shard's hash fails the test.
func smtpShardGolden(address string, n int) int {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, c := range []byte(lower(address)) {
		h ^= uint64(c)
		h *= prime
	}
	return int(h % uint64(n))
}

func lower(s string) string {
	out := []rune(s)
	for i, r := range out {
		if r >= 'A' && r <= 'Z' {
			out[i] = r + 'a' - 'A'
		}
	}
	return string(out)
}

func TestTemplateFingerprint(t *testing.T) {
	t.Parallel()
	base := func() *smtp.Message {
		return &smtp.Message{From: "news@example.com", To: []string{"a@example.net"}, Subject: "Hi {{NAME}}", Text: "x",
			Headers: smtp.Headers{Tags: []string{"news"}, MergeVars: map[string]any{"NAME": "Ann"}}}
	}
	want := TemplateFingerprint(base())
	same := []func(*smtp.Message){
		func(m *smtp.Message) { m.To = []string{"b@example.net"} },
		func(m *smtp.Message) { m.Headers.MergeVars = map[string]any{"NAME": "Bob"} },
		func(m *smtp.Message) { m.Headers.CustomArgs = map[string]any{"id": 7} },
		func(m *smtp.Message) { m.Date = time.Now() },
		func(m *smtp.Message) { m.MessageID = "<1@example.com>" },
	}
	differ := []func(*smtp.Message){
		func(m *smtp.Message) { m.Subject = "Hello {{NAME}}" },
		func(m *smtp.Message) { m.From = "shop@example.com" },
		func(m *smtp.Message) { m.HTML = "<p>x</p>" },
		func(m *smtp.Message) { m.Headers.Tags = []string{"new", "s"} },
		func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "X-A", Value: "1"}} },
		func(m *smtp.Message) { m.Attachments = []smtp.Attachment{{Filename: "a.pdf", Data: []byte("1")}} },
		func(m *smtp.Message) { m.Subject, m.Text = "Hi {{NAME}}x", "" },
	}
	for i, edit := range same {
		m := base()
		edit(m)
		assert.Equal(t, want, TemplateFingerprint(m), "same %d: fingerprint changed", i)
	}
	for i, edit := range differ {
		m := base()
		edit(m)
		assert.NotEqual(t, want, TemplateFingerprint(m), "differ %d: same fingerprint", i)
	}
}
