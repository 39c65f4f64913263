// The body formats a callback may come in: XML, JSON, forms and multipart.

package webhook

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-sendloop/sendloop/internal/wire"
)

// parseXML reads the children of the root element (whatever its name) as
// top-level keys and the children of a child named Subscriber as subscriber
// keys. Names compare without regard to case or namespace; attributes,
// deeper elements and anything after the root element are ignored.
func parseXML(body []byte) (*record, error) {
	d := xml.NewDecoder(bytes.NewReader(wire.ValidXML(body)))
	d.CharsetReader = charsetReader
	d.Entity = xml.HTMLEntity

	type frame struct {
		name     string
		text     []byte
		hasChild bool
	}
	var (
		rec   record
		stack []frame
		root  bool
	)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if !root {
				return nil, errors.New("no root element")
			}
			return nil, io.ErrUnexpectedEOF
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) > 0 {
				stack[len(stack)-1].hasChild = true
			}
			stack = append(stack, frame{name: t.Name.Local})
			root = true
		case xml.CharData:
			// Only leaves below the root and below Subscriber matter.
			if n := len(stack); n == 2 || n == 3 {
				stack[n-1].text = append(stack[n-1].text, t...)
			}
		case xml.EndElement:
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			switch len(stack) {
			case 0:
				return &rec, nil
			case 1:
				if strings.EqualFold(f.name, "subscriber") {
					rec.hasSub = true
				} else if !f.hasChild {
					rec.top.add(f.name, string(f.text))
				}
			case 2:
				if strings.EqualFold(stack[1].name, "subscriber") && !f.hasChild {
					rec.sub.add(f.name, string(f.text))
				}
			}
		}
	}
}

// charsetReader supports the non-UTF-8 encodings a PHP service is likely
// to declare.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "us-ascii", "ascii":
		b, err := io.ReadAll(input)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)+len(b)/4)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("unsupported charset %q", charset)
}

// parseJSON reads a top-level object. A member named Subscriber must be an
// object and holds the subscriber keys. Strings, numbers and booleans are
// taken as text; nulls as absent; other nested values are ignored.
func parseJSON(body []byte) (*record, error) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var top map[string]any
	if err := d.Decode(&top); err != nil {
		return nil, err
	}
	if top == nil {
		return nil, errors.New("top-level value must be an object")
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errors.New("data after top-level object")
	}

	var rec record
	for _, k := range sortedKeys(top) {
		v := top[k]
		if strings.EqualFold(k, "subscriber") {
			if v == nil {
				continue
			}
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, &ParseError{Field: "subscriber", Err: ErrInvalidValue}
			}
			rec.hasSub = true
			for _, sk := range sortedKeys(obj) {
				if s, ok := jsonText(obj[sk]); ok {
					rec.sub.add(sk, s)
				}
			}
			continue
		}
		if s, ok := jsonText(v); ok {
			rec.top.add(k, s)
		}
	}
	return &rec, nil
}

// sortedKeys makes the first-value-wins rule deterministic when keys differ
// only in case.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonText(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// parseForm reads form-encoded pairs; see addFormPair. The record holds the pairs read even
// when err reports a bad escape, so that the caller can tell a broken callback from text
// that is no form at all.
func parseForm(body []byte) (*record, error) {
	vals, err := url.ParseQuery(string(body))
	var rec record
	for _, k := range sortedKeys(vals) {
		rec.addFormPair(k, vals[k][0])
	}
	return &rec, err
}

// parseMultipart reads multipart/form-data fields like form pairs.
func parseMultipart(body []byte, boundary string) (*record, error) {
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	var rec record
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return &rec, nil
		}
		if err != nil {
			return nil, err
		}
		name := p.FormName()
		v, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		if name != "" {
			rec.addFormPair(name, string(v))
		}
	}
}

// addFormPair files "Subscriber[Key]" under the subscriber keys and any
// other key at the top level. Keys with deeper brackets are ignored.
func (rec *record) addFormPair(key, value string) {
	if len(key) > len("subscriber[]") && strings.EqualFold(key[:len("subscriber[")], "subscriber[") && key[len(key)-1] == ']' {
		inner := key[len("subscriber[") : len(key)-1]
		if !strings.ContainsAny(inner, "[]") {
			rec.hasSub = true
			rec.sub.add(inner, value)
		}
		return
	}
	if strings.ContainsAny(key, "[]") {
		return
	}
	rec.top.add(key, value)
}
