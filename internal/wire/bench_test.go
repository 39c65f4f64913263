package wire

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// browsePage is a realistic subscriber browse page: 100 subscriber objects as PHP sends
// them, numbers as strings, unset dates as 0000-00-00, and five CustomField<id> keys each.
var browsePage = func() []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		unsub, unsubIP, status := "0000-00-00", "0.0.0.0", "Subscribed"
		if i%7 == 0 {
			unsub, unsubIP, status = "2025-11-03", "203.0.113.9", "Unsubscribed"
		}
		fmt.Fprintf(&b, `{"SubscriberID":"%d","EmailAddress":"subscriber.%d@example.com",`+
			`"BounceType":"Not Bounced","SubscriptionStatus":"%s","SubscriptionDate":"2024-0%d-1%d",`+
			`"SubscriptionIP":"198.51.100.%d","UnsubscriptionDate":"%s","UnsubscriptionIP":"%s",`+
			`"OptInDate":"0000-00-00","ListID":"12","Source":"API","FirstName":"Ann %d",`+
			`"LastName":"Lee","Country":"Norway","City":"Bergen \u00e5",`+
			`"CustomField3":"Gold","CustomField7":"%d","CustomField12":"","CustomField15":"yes",`+
			`"CustomField21":"2024-06-01"}`,
			100000+i, i, status, 1+i%9, i%10, i%250, unsub, unsubIP, i, i*3)
	}
	b.WriteByte(']')
	return []byte(b.String())
}()

// benchSubscriber is what a typed decoder fills from a browse page element.
type benchSubscriber struct {
	ID                                   int
	Email, BounceType, Status, IP, UnsIP string
	SubDate, UnsDate, OptIn              time.Time
	Other                                [6]string
	Fields                               map[int]string
}

func decodeBenchSubscriber(s *benchSubscriber, data []byte) error {
	other := 0
	return ScanObject(data, func(key, v []byte) (err error) {
		switch string(key) {
		case "SubscriberID":
			s.ID, err = Int(v)
		case "EmailAddress":
			s.Email, err = String(v)
		case "BounceType":
			s.BounceType, err = String(v)
		case "SubscriptionStatus":
			s.Status, err = String(v)
		case "SubscriptionDate":
			s.SubDate, err = Date(v)
		case "SubscriptionIP":
			s.IP, err = String(v)
		case "UnsubscriptionDate":
			s.UnsDate, err = Date(v)
		case "UnsubscriptionIP":
			s.UnsIP, err = String(v)
		case "OptInDate":
			s.OptIn, err = Date(v)
		default:
			if id, ok := CustomFieldID(key); ok {
				if s.Fields == nil {
					s.Fields = make(map[int]string, 8)
				}
				s.Fields[id], err = String(v)
			} else if other < len(s.Other) {
				s.Other[other], err = String(v)
				other++
			}
		}
		return err
	})
}

func TestBrowsePageDecodes(t *testing.T) {
	t.Parallel()
	if !json.Valid(browsePage) {
		t.Fatal("browsePage is not valid JSON")
	}
	var subs []benchSubscriber
	err := ScanArray(browsePage, func(elem []byte) error {
		var s benchSubscriber
		err := decodeBenchSubscriber(&s, elem)
		subs = append(subs, s)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(subs) != 100 {
		t.Fatalf("decoded %d subscribers", len(subs))
	}
	s := subs[7]
	if s.ID != 100007 || s.Email != "subscriber.7@example.com" || s.Status != "Unsubscribed" ||
		!s.UnsDate.Equal(time.Date(2025, 11, 3, 0, 0, 0, 0, time.UTC)) || !s.OptIn.IsZero() ||
		len(s.Fields) != 5 || s.Fields[7] != "21" || s.Other[5] != "Bergen å" {
		t.Fatalf("subscriber 7 decoded as %+v", s)
	}
}

func BenchmarkScanObject(b *testing.B) {
	b.Run("scan", func(b *testing.B) {
		// Walk every member of every subscriber, values left raw.
		b.ReportAllocs()
		b.SetBytes(int64(len(browsePage)))
		fn := func(_, _ []byte) error { return nil }
		for i := 0; i < b.N; i++ {
			err := ScanArray(browsePage, func(elem []byte) error { return ScanObject(elem, fn) })
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scan_decode", func(b *testing.B) {
		// Walk and convert every value into a typed subscriber, as the SDK does.
		b.ReportAllocs()
		b.SetBytes(int64(len(browsePage)))
		subs := make([]benchSubscriber, 0, 100)
		for i := 0; i < b.N; i++ {
			subs = subs[:0]
			err := ScanArray(browsePage, func(elem []byte) error {
				subs = append(subs, benchSubscriber{})
				return decodeBenchSubscriber(&subs[len(subs)-1], elem)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json_map", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(browsePage)))
		for i := 0; i < b.N; i++ {
			var page []map[string]any
			if err := json.Unmarshal(browsePage, &page); err != nil {
				b.Fatal(err)
			}
		}
	})
}

var (
	sinkInt  int
	sinkTime time.Time
)

func BenchmarkInt(b *testing.B) {
	for _, in := range []string{`12345`, `"12345"`} {
		b.Run("Int/"+in, func(b *testing.B) {
			b.ReportAllocs()
			data := []byte(in)
			for i := 0; i < b.N; i++ {
				n, err := Int(data)
				if err != nil {
					b.Fatal(err)
				}
				sinkInt = n
			}
		})
	}
	b.Run("strconv.Atoi", func(b *testing.B) {
		b.ReportAllocs()
		text := "12345"
		for i := 0; i < b.N; i++ {
			n, err := strconv.Atoi(text)
			if err != nil {
				b.Fatal(err)
			}
			sinkInt = n
		}
	})
}

func BenchmarkDate(b *testing.B) {
	for _, in := range []string{`"2026-03-04"`, `"0000-00-00"`} {
		b.Run("Date/"+in, func(b *testing.B) {
			b.ReportAllocs()
			data := []byte(in)
			for i := 0; i < b.N; i++ {
				t, err := Date(data)
				if err != nil {
					b.Fatal(err)
				}
				sinkTime = t
			}
		})
	}
	b.Run("DateTime", func(b *testing.B) {
		b.ReportAllocs()
		data := []byte(`"2026-03-04 10:11:12"`)
		for i := 0; i < b.N; i++ {
			t, err := DateTime(data)
			if err != nil {
				b.Fatal(err)
			}
			sinkTime = t
		}
	})
	b.Run("time.Parse", func(b *testing.B) {
		b.ReportAllocs()
		text := "2026-03-04"
		for i := 0; i < b.N; i++ {
			t, err := time.Parse(DateLayout, text)
			if err != nil {
				b.Fatal(err)
			}
			sinkTime = t
		}
	})
	b.Run("time.Parse_datetime", func(b *testing.B) {
		b.ReportAllocs()
		text := "2026-03-04 10:11:12"
		for i := 0; i < b.N; i++ {
			t, err := time.Parse(DateTimeLayout, text)
			if err != nil {
				b.Fatal(err)
			}
			sinkTime = t
		}
	})
}
