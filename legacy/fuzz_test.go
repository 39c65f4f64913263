package legacy_test

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/legacy"
)

// walk visits every value of v, checking what Decode promises about it.
func walk(t *testing.T, v legacy.Value, depth int) {
	if depth > 70 {
		t.Fatalf("value nested %d deep, over the limit", depth)
	}
	switch v.Kind() {
	case legacy.KindStruct:
		if v.Struct() == nil {
			t.Fatal("a struct without members slice")
		}
		for _, m := range v.Struct() {
			walk(t, m.Value, depth+1)
		}
	case legacy.KindArray:
		if v.Array() == nil {
			t.Fatal("an array without elements slice")
		}
		for _, e := range v.Array() {
			walk(t, e, depth+1)
		}
	case legacy.KindDouble:
		f, err := v.Float()
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			t.Fatalf("double %q decoded to %v, %v", v.Text(), f, err)
		}
	case legacy.KindInt, legacy.KindBoolean:
		if _, err := v.Int(); err != nil {
			t.Fatalf("%s %q: %v", v.Kind(), v.Text(), err)
		}
	case legacy.KindBase64:
		if _, err := v.Bytes(); err != nil {
			t.Fatal(err)
		}
	case legacy.KindDateTime:
		if _, err := v.Time(); err != nil {
			t.Fatal(err)
		}
	}
	_ = v.Interface()
}

func FuzzDecode(f *testing.F) {
	seeds := []string{
		`<?xml version="1.0"?><methodResponse><params><param><value><struct>` +
			`<member><name>Status</name><value><string>Subscribed</string></value></member>` +
			`<member><name>SubscriberID</name><value>12</value></member></struct></value></param></params></methodResponse>`,
		`<methodResponse><params><param><value><array><data><value><i4>1</i4></value><value><boolean>1</boolean></value>` +
			`<value><double>-1.5e3</double></value><value><dateTime.iso8601>20250310T14:08:55</dateTime.iso8601></value>` +
			`<value><base64>R0lG&#xA;ODlh</base64></value><value><nil/></value><value><i8>-9</i8></value></data></array></value></param></params></methodResponse>`,
		`<methodResponse><fault><value><struct><member><name>faultCode</name><value><int>4</int></value></member>` +
			`<member><name>faultString</name><value><string>Too many parameters.</string></value></member></struct></value></fault></methodResponse>`,
		`<methodResponse><params><param><value><struct><member><name>APIError</name><value>Email address is missing</value></member>` +
			`<member><name>APIErrorCode</name><value>4</value></member></struct></value></param></params></methodResponse>`,
		"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><methodResponse><params><param><value>caf\xe9</value></param></params></methodResponse>",
		`<methodResponse><params><param><value><struct><member><name>x</name><value><struct><member><name>y</name><value><array><data/></array></value></member></struct></value></member></struct></value></param></params></methodResponse>`,
		`<methodResponse><params><param><value><![CDATA[<data/>]]></value></param></params></methodResponse>`,
		`<html><body>502</body></html>`,
		``,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := legacy.Decode(body)
		if err != nil {
			var fault *legacy.Fault
			if errors.As(err, &fault) && v.Kind() != legacy.KindNil {
				t.Fatal("a fault with a value")
			}
			return
		}
		walk(t, v, 0)
		// decode → encode → decode is stable.
		first := encodeResponse(v)
		back, err := legacy.Decode(first)
		if err != nil {
			t.Fatalf("%q decoded, encoded as %s, does not decode: %v", body, first, err)
		}
		if second := encodeResponse(back); string(second) != string(first) {
			t.Fatalf("%q: encoded %s, then %s", body, first, second)
		}
	})
}

func FuzzParseChart(f *testing.F) {
	seeds := []string{
		sampleChart,
		`<data/>`,
		`<data><series><set><label>Subscription</label><serie value="3" tooltip="three"/></set></series></data>`,
		`<data><set label="Unsubscription"><serie> 1.5 </serie><serie><value/></serie></set></data>`,
		`<data><xaxis title="Day"><label>a</label></xaxis><yaxis title="Count"><yaxislabel>0</yaxislabel></yaxis></data>`,
		`<data><series><set><serie><value>12.5%</value></serie></set></series></data>`,
		`<chart/>`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		chart, err := legacy.ParseChart(doc)
		if err != nil {
			if chart != nil {
				t.Fatal("a chart with an error")
			}
			return
		}
		for _, s := range chart.Series {
			for _, p := range s.Points {
				if math.IsNaN(p.Value) || math.IsInf(p.Value, 0) {
					t.Fatalf("value %v in set %q", p.Value, s.Label)
				}
			}
			if len(s.Values()) != len(s.Points) {
				t.Fatal("Values lost points")
			}
		}
		_ = chart.Subscriptions()
		_ = chart.Unsubscriptions()
		// decode → encode → decode is stable, for the series.
		first := encodeChart(chart)
		back, err := legacy.ParseChart(first)
		if err != nil {
			t.Fatalf("%q parsed, encoded as %s, does not parse: %v", doc, first, err)
		}
		if second := encodeChart(back); string(second) != string(first) {
			t.Fatalf("%q: encoded %s, then %s", doc, first, second)
		}
	})
}

// encodeValue writes v as an XML-RPC value, for the decode → encode → decode check.
func encodeValue(b *strings.Builder, v legacy.Value) {
	b.WriteString("<value>")
	switch v.Kind() {
	case legacy.KindNil:
		b.WriteString("<nil/>")
	case legacy.KindString:
		b.WriteString("<string>")
		_ = xml.EscapeText(b, []byte(v.Text()))
		b.WriteString("</string>")
	case legacy.KindInt:
		n, _ := v.Int()
		fmt.Fprintf(b, "<i8>%d</i8>", n)
	case legacy.KindBoolean:
		on, _ := v.Bool()
		fmt.Fprintf(b, "<boolean>%d</boolean>", map[bool]int{false: 0, true: 1}[on])
	case legacy.KindDouble:
		f, _ := v.Float()
		fmt.Fprintf(b, "<double>%s</double>", strconv.FormatFloat(f, 'g', -1, 64))
	case legacy.KindDateTime:
		tm, _ := v.Time()
		fmt.Fprintf(b, "<dateTime.iso8601>%s</dateTime.iso8601>", tm.Format("20060102T15:04:05Z07:00"))
	case legacy.KindBase64:
		data, _ := v.Bytes()
		fmt.Fprintf(b, "<base64>%s</base64>", base64.StdEncoding.EncodeToString(data))
	case legacy.KindStruct:
		b.WriteString("<struct>")
		for _, m := range v.Struct() {
			b.WriteString("<member><name>")
			_ = xml.EscapeText(b, []byte(m.Name))
			b.WriteString("</name>")
			encodeValue(b, m.Value)
			b.WriteString("</member>")
		}
		b.WriteString("</struct>")
	case legacy.KindArray:
		b.WriteString("<array><data>")
		for _, e := range v.Array() {
			encodeValue(b, e)
		}
		b.WriteString("</data></array>")
	}
	b.WriteString("</value>")
}

func encodeResponse(v legacy.Value) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0"?><methodResponse><params><param>`)
	encodeValue(&b, v)
	b.WriteString(`</param></params></methodResponse>`)
	return []byte(b.String())
}

// encodeChart writes a chart back as a chart document.
func encodeChart(c *legacy.Chart) []byte {
	var b strings.Builder
	b.WriteString("<data><series>")
	for _, s := range c.Series {
		b.WriteString("<set><label>")
		_ = xml.EscapeText(&b, []byte(s.Label))
		b.WriteString("</label>")
		for _, p := range s.Points {
			fmt.Fprintf(&b, `<serie><value>%s</value></serie>`, strconv.FormatFloat(p.Value, 'g', -1, 64))
		}
		b.WriteString("</set>")
	}
	b.WriteString("</series></data>")
	return []byte(b.String())
}
