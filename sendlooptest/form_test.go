package sendlooptest

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParseFormMatchesParseQuery(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"", "a=1", "a=1&a=2&b=", "APIKey=k%2Fx&Subscribers%5B0%5D%5BEmailAddress%5D=a%40b.c",
		"x=a+b&y=%41%42", "&&a=1&", "bad=%zz&ok=1", "k", "=v", "trail=%4",
	} {
		want, _ := url.ParseQuery(body)
		assert.Equal(t, want, parseForm([]byte(body)), body)
	}
}

// FuzzParseForm compares parseForm with url.ParseQuery on everything but semicolons,
// which url.ParseQuery refuses and the fake, like PHP, keeps in the key.
func FuzzParseForm(f *testing.F) {
	for _, s := range []string{"a=1&b=2", "a=%4", "a+b=c+d", "%zz=1", "x=%e9%", "k=1&k=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		for i := 0; i < len(body); i++ {
			if body[i] == ';' {
				return
			}
		}
		want, _ := url.ParseQuery(body)
		got := parseForm([]byte(body))
		// decode → encode → decode is stable.
		if again := parseForm([]byte(got.Encode())); len(got) > 0 || len(again) > 0 {
			assert.Equal(t, got, again, "%q re-encoded as %q", body, got.Encode())
		}
		if len(want) == 0 && len(got) == 0 {
			return
		}
		assert.Equal(t, want, got, "%q", body)
	})
}
