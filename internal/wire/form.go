package wire

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"

	"github.com/google/go-querystring/query"
)

// Values turns request parameters into form values. params may be nil, url.Values (copied),
// map[string]string, or a struct tagged for go-querystring: `url:"Name,omitempty"` for
// optional fields, `url:"Name,brackets"` for arrays sent as Name[], `url:"Name,int"` for
// booleans sent as 1 or 0. Types that go-querystring cannot express implement its Encoder.
//
// The result's Encode sorts keys, so the same parameters always give the same body.
func Values(params any) (url.Values, error) {
	switch p := params.(type) {
	case nil:
		return url.Values{}, nil
	case url.Values:
		out := make(url.Values, len(p)+1)
		for k, v := range p {
			out[k] = slices.Clone(v)
		}
		return out, nil
	case map[string]string:
		out := make(url.Values, len(p)+1)
		for k, v := range p {
			out.Set(k, v)
		}
		return out, nil
	}
	v, err := query.Values(params)
	if err != nil {
		return nil, fmt.Errorf("encoding parameters: %w", err)
	}
	return v, nil
}

// CustomFieldPrefix starts the key of every custom field value: CustomField<id>.
const CustomFieldPrefix = "CustomField"

// ID reads an object key that names a record by its ID: digits only, as the service
// writes them.
func ID(key []byte) (int, bool) {
	if len(key) == 0 || key[0] == '-' || key[0] == '+' {
		return 0, false
	}
	n, ok := fastInt(key)
	return int(n), ok
}

// CustomFieldID returns the numeric id of a CustomField<id> key.
func CustomFieldID(key []byte) (int, bool) {
	if len(key) <= len(CustomFieldPrefix) || string(key[:len(CustomFieldPrefix)]) != CustomFieldPrefix {
		return 0, false
	}
	id, ok := fastInt(key[len(CustomFieldPrefix):])
	if !ok || id < 0 || key[len(CustomFieldPrefix)] == '-' || key[len(CustomFieldPrefix)] == '+' {
		return 0, false
	}
	return int(id), true
}

// EncodeCustomFields adds fields to v as key[CustomField<id>], or as bare CustomField<id>
// when key is empty, in ascending id order.
func EncodeCustomFields(key string, fields map[int]string, v *url.Values) {
	if *v == nil {
		*v = url.Values{}
	}
	for _, id := range SortedIDs(nil, fields) {
		name := CustomFieldPrefix + strconv.Itoa(id)
		if key != "" {
			name = key + "[" + name + "]"
		}
		v.Set(name, fields[id])
	}
}

// SortedIDs appends the keys of fields to dst in ascending order.
func SortedIDs(dst []int, fields map[int]string) []int {
	for id := range fields {
		dst = append(dst, id)
	}
	slices.Sort(dst)
	return dst
}

// AppendQueryEscape appends s escaped as url.QueryEscape does, without allocating.
func AppendQueryEscape(dst []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '-', c == '_', c == '.', c == '~':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', hex[c>>4], hex[c&15])
		}
	}
	return dst
}
