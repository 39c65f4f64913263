package sendloop

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
)

// Every fuzz target of a decoder asserts that decode → encode → decode is stable: what a
// decoder reads, written back in the service's form, reads back as the same value. Where a
// type's Go shape is the wire's, encoding/json writes it; the wire… helpers below (and wireAs, for a renamed key or an Extra map) write the
// others.

// stable decodes data; when that succeeds, it encodes the value, decodes that, encodes
// again and requires the two encodings to match.
func stable[T any](t *testing.T, data []byte, decode func([]byte) (T, error), encode func(T) ([]byte, error)) {
	t.Helper()
	v, err := decode(data)
	if err != nil {
		return
	}
	first, err := encode(v)
	if err != nil {
		t.Fatalf("%q decoded into %+v, which does not encode: %v", data, v, err)
	}
	back, err := decode(first)
	if err != nil {
		t.Fatalf("%q decoded and encoded as %s, which does not decode: %v", data, first, err)
	}
	second, err := encode(back)
	if err != nil || !bytes.Equal(first, second) {
		t.Fatalf("%q: encoded %s, then %s (%v)", data, first, second, err)
	}
}

// decoder adapts an UnmarshalJSON method to stable.
func decoder[T any, PT interface {
	*T
	UnmarshalJSON([]byte) error
}]() func([]byte) (T, error) {
	return func(data []byte) (T, error) {
		var v T
		err := PT(&v).UnmarshalJSON(data)
		return v, err
	}
}

func marshal[T any](v T) ([]byte, error) { return json.Marshal(v) }

// wireObject writes v's JSON members, renamed where the service's key differs (Go name →
// wire key), with the members of an Extra map inlined, as the service sends them.
func wireObject(v any, rename map[string]string) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	extra, _ := m["Extra"].(map[string]any) // nil when empty
	delete(m, "Extra")
	for k, x := range extra {
		if _, taken := m[k]; !taken {
			m[k] = x
		}
	}
	for from, to := range rename {
		if x, ok := m[from]; ok {
			delete(m, from)
			m[to] = x
		}
	}
	return m, nil
}

func wireAs[T any](rename map[string]string) func(T) ([]byte, error) {
	return func(v T) ([]byte, error) {
		m, err := wireObject(v, rename)
		if err != nil {
			return nil, err
		}
		return json.Marshal(m)
	}
}

func wireCustomField(f CustomField) ([]byte, error) { return wireAs[CustomField](nil)(f) }

func wireList(l List) ([]byte, error) {
	m, err := wireObject(l, nil)
	if err != nil {
		return nil, err
	}
	activity := map[string]int{}
	for _, d := range l.SubscriptionActivity {
		activity[d.Date.String()] += d.Count
	}
	m["SubscriptionActivity"] = activity
	var fields []map[string]any
	for _, f := range l.CustomFields {
		fm, err := wireObject(f, nil)
		if err != nil {
			return nil, err
		}
		fields = append(fields, fm)
	}
	m["CustomFields"] = fields
	return json.Marshal(m)
}

func wireSubscriberSearchResult(r SubscriberSearchResult) ([]byte, error) {
	addresses, details := map[string]string{}, map[string]map[string]string{}
	for _, hit := range r.Subscribers {
		id := strconv.Itoa(hit.SubscriberID)
		addresses[id] = hit.EmailAddress
		d := map[string]string{"SubscriptionStatus": string(hit.SubscriptionStatus), "BounceType": string(hit.BounceType)}
		for fid, value := range hit.CustomFields {
			d["CustomField"+strconv.Itoa(fid)] = value
		}
		details[id] = d
	}
	return json.Marshal(map[string]any{"ListID": r.ListID, "ListName": r.ListName, "Subscribers": addresses, "SubscriberDetails": details})
}

func wireDailySeries(s DailySeries) ([]byte, error) {
	days := map[string]map[string]int{}
	for _, d := range s {
		days[d.Date.String()] = map[string]int{"Total": d.Total, "Unique": d.Unique}
	}
	return json.Marshal(days)
}

func wireSpamComplaintStats(st SpamComplaintStats) ([]byte, error) {
	m := map[string]any{"Total": st.Total, "Unique": st.Unique}
	for _, d := range st.Days {
		m[d.Date.String()] = map[string]int{"Total": d.Total, "Unique": d.Unique}
	}
	return json.Marshal(m)
}
