package sendloop

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/go-sendloop/sendloop/internal/transport"
)

func FuzzDateUnmarshal(f *testing.F) {
	for _, s := range []string{`"2026-11-21"`, `"0000-00-00"`, `""`, `null`, `"2026-02-30"`, `"2026-11-21 10:00:00"`, `12`, `"x"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Date
		if err := d.UnmarshalJSON(data); err != nil {
			return
		}
		out, err := d.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var back Date
		if err := back.UnmarshalJSON(out); err != nil || !back.Equal(d.Time) {
			t.Fatalf("%s → %s → %v (%v)", data, out, back, err)
		}
	})
}

func FuzzDateTimeUnmarshal(f *testing.F) {
	for _, s := range []string{`"2026-11-21 10:00:00"`, `"0000-00-00 00:00:00"`, `"2026-11-21T23:59:59"`, `"2026-11-21"`, `null`, `"24:00"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var dt DateTime
		if err := dt.UnmarshalJSON(data); err != nil {
			return
		}
		out, _ := dt.MarshalJSON()
		var back DateTime
		if err := back.UnmarshalJSON(out); err != nil || !back.Equal(dt.Time) {
			t.Fatalf("%s → %s → %v (%v)", data, out, back, err)
		}
	})
}

func FuzzSubscriberUnmarshal(f *testing.F) {
	f.Add([]byte(`{"SubscriberID":"12","EmailAddress":"a@b.c","CustomField7":"x","SubscriptionDate":"0000-00-00","Score":"1.5"}`))
	f.Add([]byte(`{"SubscriberID":12,"CustomField0":null,"CustomFields":{"3":"y"},"BounceType":"Hard"}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"SubscriberID":"x"}`))
	f.Add([]byte(`{"Score":"NaN"}`))
	f.Add([]byte(`{"Score":"-Inf"}`))
	f.Add([]byte("{\"EmailAddress\":\"a\xffb\",\"CustomField\xfe1\":\"x\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[Subscriber](), wireAs[Subscriber](nil))
	})
}

func FuzzAccountInfoUnmarshal(f *testing.F) {
	f.Add([]byte(`{"Username":"demo","MemberSince":"2025-01-01 00:00:00","TimeZone":"Europe\/London"}`))
	f.Add([]byte(`{"LastActivityDateTime":"0000-00-00 00:00:00","Email":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[AccountInfo](), marshal[AccountInfo])
	})
}

func FuzzDecodeTimeZones(f *testing.F) {
	f.Add([]byte(`["UTC","Europe\/Paris"]`))
	f.Add([]byte(`{"UTC":"UTC","Asia/Tokyo":"Tokyo"}`))
	f.Add([]byte(`[{"Name":"UTC","Label":"x"},{"zone":"A/B"}]`))
	f.Add([]byte(`{"0":"UTC"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decodeTimeZones, marshal[[]TimeZone])
		zones, err := decodeTimeZones(data)
		if err != nil {
			return
		}
		for _, z := range zones {
			if z.Name == "" {
				t.Fatalf("a zone without a name from %q", data)
			}
		}
	})
}

// FuzzDecodeEnvelope feeds any body through the response path: it must end in a value or
// one of the typed errors, never a panic.
func FuzzDecodeEnvelope(f *testing.F) {
	f.Add(200, []byte(`{"Success":true,"AccountInfo":{"Username":"x"}}`))
	f.Add(200, []byte(`{"Success":false,"ErrorCode":"104","ErrorMessage":"Invalid API key","ErrorFields":[]}`))
	f.Add(500, []byte(`{"Success":false,"ErrorCode":116,"ErrorFields":{"0":"TimeZone"}}`))
	f.Add(503, []byte(`<html>busy</html>`))
	f.Add(200, []byte(`{"Success":"1","AccountInfo":[]}`))
	c, err := NewClient("fuzz-key")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		var info AccountInfo
		err := c.decodeEnvelope("account.info.get", &transport.Response{StatusCode: status, Body: body}, func(key, value []byte) error {
			if string(key) == "AccountInfo" {
				return info.UnmarshalJSON(value)
			}
			return nil
		})
		if err == nil && (status < 200 || status > 299) {
			t.Fatalf("status %d accepted", status)
		}
	})
}

func FuzzSubscriberSearchResultUnmarshal(f *testing.F) {
	f.Add([]byte(`{"ListID":1,"ListName":"A","Subscribers":{"12":"a@b.c","13":"d@e.f"},"SubscriberDetails":{"12":{"SubscriptionStatus":"Subscribed","BounceType":"Not Bounced","CustomField3":"x"}}}`))
	f.Add([]byte(`{"ListID":"2","Subscribers":[],"SubscriberDetails":[]}`))
	f.Add([]byte(`{"Subscribers":{"x":"a"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[SubscriberSearchResult](), wireSubscriberSearchResult)
		var r SubscriberSearchResult
		if err := r.UnmarshalJSON(data); err != nil {
			return
		}
		for _, hit := range r.Subscribers {
			// Every ID comes from a key of digits in the answer.
			if hit.SubscriberID < 0 || !bytes.Contains(data, []byte(strconv.Itoa(hit.SubscriberID))) {
				t.Fatalf("hit ID %d is not in %q", hit.SubscriberID, data)
			}
		}
	})
}

func FuzzCustomFieldUnmarshal(f *testing.F) {
	f.Add([]byte(`{"CustomFieldID":"7","FieldName":"Age","FieldType":"Single line","FieldOptions":["a","b"],"X":{"y":1}}`))
	f.Add([]byte(`{"FieldID":3,"FieldDefaultValue":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[CustomField](), wireCustomField)
		var cf CustomField
		if err := cf.UnmarshalJSON(data); err != nil {
			return
		}
		for key := range cf.Extra {
			switch key {
			case "CustomFieldID", "FieldID", "ID", "FieldName", "FieldType", "FieldDataType", "FieldDefaultValue", "FieldOptions":
				t.Fatalf("known key %q landed in Extra", key)
			}
		}
	})
}

func FuzzListUnmarshal(f *testing.F) {
	f.Add([]byte(`{"ListID":"1","Name":"A","OptInMode":"Double","CreatedOn":"2026-01-01 00:00:00","SubscriptionActivity":{"2026-11-20":"3","2026-11-19":1},"ActiveSubscribers":"4"}`))
	f.Add([]byte(`{"SubscriptionActivity":[],"CustomFields":[{"CustomFieldID":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[List](), wireList)
		var l List
		if err := l.UnmarshalJSON(data); err != nil {
			return
		}
		for i := 1; i < len(l.SubscriptionActivity); i++ {
			if l.SubscriptionActivity[i].Date.Before(l.SubscriptionActivity[i-1].Date.Time) {
				t.Fatalf("activity out of order: %+v", l.SubscriptionActivity)
			}
		}
	})
}
