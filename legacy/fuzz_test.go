package legacy_test

import (
	"errors"
	"math"
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
	})
}
