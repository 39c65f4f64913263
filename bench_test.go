package sendloop_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop"
)

// accountBody is account.info.get as the service answers it.
const accountBody = `{"Success":true,"AccountInfo":{"Username":"demo","Subdomain":"demo",` +
	`"MemberSince":"2025-11-21 05:13:43","FirstName":"Dana","LastName":"Demo","Email":"dana@example.com",` +
	`"CompanyName":"Example Ltd","Website":"https:\/\/example.com","Street":"1 Main Street","City":"London",` +
	`"State":"","Country":"GB","Phone":"","Fax":"","TimeZone":"Europe\/London","SignUpIP":"127.0.0.1",` +
	`"LastActivityDateTime":"2026-11-21 05:13:43","LastAccountUpdateDate":"0000-00-00 00:00:00",` +
	`"EmailVerificationStatus":"Confirmed"}}`

// rawAccountInfo is what a hand-written caller would decode into.
type rawAccountInfo struct {
	Username, Subdomain, MemberSince, FirstName, LastName, Email, CompanyName, Website string
	Street, City, State, Country, Phone, Fax, TimeZone, SignUpIP, LastActivityDateTime string
	LastAccountUpdateDate, EmailVerificationStatus                                     string
}

// BenchmarkCall compares Account.Get with the hand-written net/http + url.Values +
// encoding/json call doing the same work, against one loopback server.
func BenchmarkCall(b *testing.B) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.PostForm.Get("APIKey") != "bench-key" {
			http.Error(w, "no key", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(accountBody))
	}))
	defer hs.Close()
	ctx := context.Background()
	newHTTPClient := func() *http.Client {
		return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}

	b.Run("sdk", func(b *testing.B) {
		c, err := sendloop.NewClient("bench-key", sendloop.WithBaseURL(hs.URL), sendloop.WithHTTPClient(newHTTPClient()))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			info, err := c.Account.Get(ctx)
			if err != nil || info.Username != "demo" {
				b.Fatal(err)
			}
		}
	})

	// bare is the floor: the same POST, its body read, nothing decoded.
	b.Run("bare", func(b *testing.B) {
		hc := newHTTPClient()
		endpoint := hs.URL + "/api/v3/account.info.get/json"
		body := url.Values{"APIKey": {"bench-key"}}.Encode()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
		}
	})

	b.Run("raw", func(b *testing.B) {
		hc := newHTTPClient()
		endpoint := hs.URL + "/api/v3/account.info.get/json"
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			form := url.Values{"APIKey": {"bench-key"}}
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var out struct {
				Success     bool
				AccountInfo rawAccountInfo
			}
			err = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			if err != nil || !out.Success || out.AccountInfo.Username != "demo" {
				b.Fatal(err)
			}
			// The SDK parses the date-times too.
			for _, s := range []string{out.AccountInfo.MemberSince, out.AccountInfo.LastActivityDateTime} {
				if _, err := time.Parse("2006-01-02 15:04:05", s); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
