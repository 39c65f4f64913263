package address

import (
	"net/mail"
	"testing"
)

func netMailValid(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

func TestValid(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"ann@example.com": true, "a.b+tag@sub.example.co.uk": true, "x@localhost": true,
		"o'brien@example.ie": true, `"quoted name"@example.com`: false, "zoë@example.com": true,
		"": false, "plain": false, "@example.com": false, "a@": false, "a@@b.c": false,
		"a..b@example.com": false, ".a@example.com": false, "a@example..com": false,
		"a b@example.com": false, "Ann <ann@example.com>": false, " ann@example.com": false,
		"a@[192.0.2.1]": true, "a@b.c.": false,
	}
	for in, want := range tests {
		if got := Valid(in); got != want {
			t.Errorf("Valid(%q) = %v, want %v", in, got, want)
		}
		if got := netMailValid(in); got != want {
			t.Errorf("net/mail disagrees on %q: %v", in, got)
		}
	}
}

// FuzzQuick checks that every address quick decides, net/mail decides the same way.
func FuzzQuick(f *testing.F) {
	for _, s := range []string{"ann@example.com", "a..b@x.y", "@", "a@b", "!#$%&'*+-/=?^_`{|}~@x", "a@b@c", "x@-y.z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if valid, decided := quick(s); decided && valid != netMailValid(s) {
			t.Fatalf("quick(%q) = %v, net/mail says %v", s, valid, !valid)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	b.Run("quick", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !Valid("some.user+tag@mail.example.com") {
				b.Fatal()
			}
		}
	})
	b.Run("net_mail", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if !netMailValid("some.user+tag@mail.example.com") {
				b.Fatal()
			}
		}
	})
}
