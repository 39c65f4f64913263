package personalize_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/go-sendloop/sendloop/personalize"
)

type renderCase struct {
	name string
	tmpl string
	vars map[string]any
	want string
}

func runRenderCases(t *testing.T, cases []renderCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := personalize.Render(tc.tmpl, tc.vars)
			if err != nil {
				t.Fatalf("Render(%q): %v", tc.tmpl, err)
			}
			if got != tc.want {
				t.Fatalf("Render(%q)\n got: %q\nwant: %q", tc.tmpl, got, tc.want)
			}
		})
	}
}

func TestRenderMergeTags(t *testing.T) {
	t.Parallel()
	vars := map[string]any{
		"%FIRSTNAME%":  "Ada",
		"%LAST_NAME%":  "Lovelace",
		"%A%":          "[a]",
		"%B%":          "[b]",
		"%HTML%":       `<b>"Tom & Jerry"</b>`,
		"%NIL%":        nil,
		"first-name":   "not a merge tag",
		"%first-name%": "never used: '-' is not a name character",
		"FIRSTNAME":    "mustache-only",
	}
	runRenderCases(t, []renderCase{
		{"replaced", "Hi %FIRSTNAME% %LAST_NAME%!", vars, "Hi Ada Lovelace!"},
		{"adjacent", "%FIRSTNAME%%LAST_NAME%", vars, "AdaLovelace"},
		{"unknown left as is", "Hi %NOBODY%!", vars, "Hi %NOBODY%!"},
		{"case sensitive", "%firstname%", vars, "%firstname%"},
		{"percent sign", "50% off, 100%", vars, "50% off, 100%"},
		{"double percent", "%% and %%%", vars, "%% and %%%"},
		{"lone percent before tag", "50% %FIRSTNAME%", vars, "50% Ada"},
		{"percent before tag", "100%%FIRSTNAME%", vars, "100%Ada"},
		{"empty name", "%%FIRSTNAME%%", vars, "%Ada%"},
		{"invalid name chars", "%first-name% %FIRST NAME%", vars, "%first-name% %FIRST NAME%"},
		{"overlap first wins", "%A%B%", vars, "[a]B%"},
		{"overlap unknown first", "%X%A%", vars, "%X[a]"},
		{"not escaped", "%HTML%", vars, `<b>"Tom & Jerry"</b>`},
		{"nil is empty", "[%NIL%]", vars, "[]"},
		{"nil vars", "Hi %FIRSTNAME%", nil, "Hi %FIRSTNAME%"},
		{"inside section", "{{#list}}%FIRSTNAME%{{.}} {{/list}}", map[string]any{"%FIRSTNAME%": "x", "list": []any{1, 2}}, "x1 x2 "},
		{"only root vars", "{{#ctx}}%K%{{/ctx}}", map[string]any{"ctx": map[string]any{"%K%": "inner"}}, "%K%"},
		{"mustache name with percents", "{{%FIRSTNAME%}}", vars, "Ada"},
		{"in comment: removed", "a{{! %FIRSTNAME% }}b", vars, "ab"},
		{"delimiters win", "{{=% %=}}%FIRSTNAME%", vars, "mustache-only"},
	})
}

func TestRenderValues(t *testing.T) {
	t.Parallel()
	type score int
	type label string
	s := "pointed"
	cycle := map[string]any{"name": "c"}
	cycle["self"] = cycle
	var selfPtr any
	selfPtr = &selfPtr
	vars := map[string]any{
		"cycle":     cycle,
		"selfptr":   selfPtr,
		"%INT%":     3,
		"%FLOAT%":   1.5,
		"%WHOLE%":   3.0,
		"%TRUE%":    true,
		"%NUM%":     json.Number("1.210"),
		"%BIG%":     json.Number("12345678901234567890"),
		"%LIST%":    []any{"a", 1.0},
		"%MAP%":     map[string]any{"k": "<v>"},
		"int64":     int64(-9007199254740993),
		"uint8":     uint8(7),
		"float32":   float32(1.1),
		"tiny":      1e-7,
		"huge":      1e21,
		"neg":       -2.50,
		"nan":       math.NaN(),
		"false":     false,
		"score":     score(42),
		"label":     label("<L>"),
		"ptr":       &s,
		"nilptr":    (*string)(nil),
		"bytes":     []byte("b&b"),
		"strings":   []string{"x", "y"},
		"stringMap": map[string]string{"k": "v"},
		"struct":    struct{ A int }{A: 1},
		"func":      func() {},
		"time":      stringer("<stringer>"),
	}
	runRenderCases(t, []renderCase{
		{"merge int", "%INT%", vars, "3"},
		{"merge float", "%FLOAT%", vars, "1.5"},
		{"merge whole float", "%WHOLE%", vars, "3"},
		{"merge bool", "%TRUE%", vars, "true"},
		{"merge json.Number fraction", "%NUM%", vars, "1.21"},
		{"merge json.Number integer kept exact", "%BIG%", vars, "12345678901234567890"},
		{"merge list as JSON", "%LIST%", vars, `["a",1]`},
		{"merge map as JSON unescaped", "%MAP%", vars, `{"k":"<v>"}`},
		{"int64", "{{int64}}", vars, "-9007199254740993"},
		{"uint8", "{{uint8}}", vars, "7"},
		{"float32 shortest", "{{float32}}", vars, "1.1"},
		{"small float exponent", "{{tiny}}", vars, "1e-7"},
		{"large float exponent", "{{huge}}", vars, "1e+21"},
		{"negative float", "{{neg}}", vars, "-2.5"},
		{"NaN", "{{nan}}", vars, "NaN"},
		{"false", "{{false}}", vars, "false"},
		{"named int", "{{score}}", vars, "42"},
		{"named string escaped", "{{label}}", vars, "&lt;L&gt;"},
		{"pointer", "{{ptr}}", vars, "pointed"},
		{"nil pointer", "[{{nilptr}}]", vars, "[]"},
		{"bytes as string", "{{bytes}}", vars, "b&amp;b"},
		{"string slice as JSON", "{{{strings}}}", vars, `["x","y"]`},
		{"string slice iterated", "{{#strings}}<{{.}}>{{/strings}}", vars, "<x><y>"},
		{"string map", "{{stringMap.k}} {{#stringMap}}{{k}}{{/stringMap}}", vars, "v v"},
		{"struct as JSON", "{{{struct}}}", vars, `{"A":1}`},
		{"struct fields not looked up", "[{{struct.A}}]", vars, "[]"},
		{"func prints nothing", "[{{func}}]", vars, "[]"},
		{"stringer", "{{time}}", vars, "&lt;stringer&gt;"},
		{"cyclic map prints nothing", "[{{cycle}}]", vars, "[]"},
		{"cyclic map lookups", "{{cycle.self.self.name}}{{#cycle}}{{#self}}{{name}}{{/self}}{{/cycle}}", vars, "cc"},
		{"self-referencing pointer", "[{{selfptr}}{{selfptr.x}}{{#selfptr}}t{{/selfptr}}]", vars, "[t]"},
	})
}

type stringer string

func (s stringer) String() string { return string(s) }

func TestRenderMustache(t *testing.T) {
	t.Parallel()
	vars := map[string]any{
		"name":    `O'Brien & "Sons" <x>`,
		"zero":    0,
		"zerof":   0.0,
		"empty":   "",
		"emptyM":  map[string]any{},
		"nilMap":  map[string]any(nil),
		"emptyL":  []any{},
		"intList": []int{1, 2, 3},
		"items":   []map[string]any{{"n": "a"}, {"n": "b"}},
		"user":    map[string]any{"first": "Ada", "address": map[string]string{"city": "London"}},
		"yes":     true,
	}
	runRenderCases(t, []renderCase{
		{"escaped", "{{name}}", vars, "O&#39;Brien &amp; &quot;Sons&quot; &lt;x&gt;"},
		{"triple raw", "{{{name}}}", vars, `O'Brien & "Sons" <x>`},
		{"ampersand raw", "{{& name}}", vars, `O'Brien & "Sons" <x>`},
		{"missing", "[{{missing}}]", vars, "[]"},
		{"zero is falsey", "{{#zero}}x{{/zero}}{{^zero}}0{{/zero}}", vars, "0"},
		{"zero float is falsey", "{{^zerof}}0{{/zerof}}", vars, "0"},
		{"zero prints", "{{zero}}", vars, "0"},
		{"empty string falsey", "{{^empty}}none{{/empty}}", vars, "none"},
		{"empty map truthy", "{{#emptyM}}yes{{/emptyM}}", vars, "yes"},
		{"nil map falsey", "{{^nilMap}}no{{/nilMap}}", vars, "no"},
		{"empty list falsey", "{{^emptyL}}no{{/emptyL}}", vars, "no"},
		{"int slice", "{{#intList}}{{.}},{{/intList}}", vars, "1,2,3,"},
		{"slice of maps", "{{#items}}{{n}}{{/items}}", vars, "ab"},
		{"dotted through string map", "{{user.address.city}}", vars, "London"},
		{"section pushes map", "{{#user}}{{first}} in {{address.city}}{{/user}}", vars, "Ada in London"},
		{"parent context", "{{#user}}{{#yes}}{{first}}{{/yes}}{{/user}}", vars, "Ada"},
		{"standalone lines", "<ul>\n  {{#items}}\n  <li>{{n}}</li>\n  {{/items}}\n</ul>\n", vars, "<ul>\n  <li>a</li>\n  <li>b</li>\n</ul>\n"},
		{"no tags", "plain {text} } {", vars, "plain {text} } {"},
		{"partial without partials", "[{{>footer}}]", vars, "[]"},
	})
}

// A value inserted by one tag style must never be interpreted by either
// style again: subscribers control their names.
func TestRenderNoInjection(t *testing.T) {
	t.Parallel()
	evil := "{{secret}} {{#x}}%SECRET%{{/x}} %SECRET% {{=| |=}}"
	vars := map[string]any{
		"name":     evil,
		"%NAME%":   evil,
		"%SECRET%": "LEAK",
		"secret":   "LEAK",
		"x":        true,
		"%OPEN%":   "{{",
		"%CLOSE%":  "}}",
		"%PCT%":    "%",
	}
	escaped := "{{secret}} {{#x}}%SECRET%{{/x}} %SECRET% {{=| |=}}" // nothing to HTML-escape
	runRenderCases(t, []renderCase{
		{"mustache value", "{{name}}", vars, escaped},
		{"raw mustache value", "{{{name}}}", vars, evil},
		{"merge value", "%NAME%", vars, evil},
		{"merge value then text", "%NAME%!{{secret}}", vars, evil + "!LEAK"},
		{"tag assembled from merge values", "%OPEN%secret%CLOSE%", vars, "{{secret}}"},
		{"merge tag assembled from values", "%PCT%SECRET%PCT%", vars, "%SECRET%"},
		{"mustache value next to merge text", "{{%PCT%}}SECRET%", vars, "%SECRET%"},
	})
	for _, tc := range []renderCase{{tmpl: "{{name}}"}, {tmpl: "{{{name}}}"}, {tmpl: "%NAME%"}} {
		got, err := personalize.Render(tc.tmpl, vars)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(got, "LEAK") {
			t.Errorf("Render(%q) re-interpreted an inserted value: %q", tc.tmpl, got)
		}
	}
}

func TestRenderSyntaxErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		tmpl      string
		line, col int
		msg       string
	}{
		{"unclosed tag", "Hi {{name", 1, 4, "unclosed tag"},
		{"unclosed triple", "{{{name}}", 1, 1, "unclosed tag"},
		{"unclosed section", "a\n {{#items}}x", 2, 2, `unclosed section "items"`},
		{"unclosed inner section", "{{#a}}{{#b}}{{/a}}", 1, 13, `section close "a" does not match open section "b"`},
		{"mismatched close", "{{#a}}\n\nx{{/b}}", 3, 2, `section close "b" does not match open section "a" (line 1)`},
		{"close without open", "x{{/a}}", 1, 2, `section close "a" without an open section`},
		{"empty name", "{{ }}", 1, 1, "empty tag name"},
		{"space in name", "{{first name}}", 1, 1, "contains whitespace"},
		{"bad dotted name", "{{a..b}}", 1, 1, "invalid dotted name"},
		{"leading dot", "{{.a}}", 1, 1, "invalid dotted name"},
		{"empty partial name", "{{> }}", 1, 1, "invalid partial name"},
		{"delimiter one part", "{{=<%=}}", 1, 1, "bad delimiter change"},
		{"delimiter three parts", "{{=< % >=}}", 1, 1, "bad delimiter change"},
		{"delimiter with equals", "{{=<= =>=}}", 1, 1, "bad delimiter change"},
		{"delimiter unclosed", "{{=<% %>}}", 1, 1, "unclosed tag"},
		{"new delimiters unclosed", "{{=<% %>=}}<%name", 1, 12, "unclosed tag"},
		{"column counts runes", "héllo {{", 1, 7, "unclosed tag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := personalize.Render(tc.tmpl, nil)
			var se *personalize.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Render(%q) error = %v, want *SyntaxError", tc.tmpl, err)
			}
			if se.Line != tc.line || se.Col != tc.col || !strings.Contains(se.Msg, tc.msg) || se.Partial != "" {
				t.Fatalf("Render(%q) error = %+v, want line %d col %d msg containing %q", tc.tmpl, se, tc.line, tc.col, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "personalize: syntax error at line ") {
				t.Fatalf("Error() = %q", err.Error())
			}
		})
	}
}

func TestRenderNestingLimit(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("{{#a}}", 300) + strings.Repeat("{{/a}}", 300)
	_, err := personalize.Render(deep, nil)
	var se *personalize.SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Msg, "nested more than") {
		t.Fatalf("error = %v, want a nesting SyntaxError", err)
	}
	ok := strings.Repeat("{{#a}}", 200) + "x" + strings.Repeat("{{/a}}", 200)
	got, err := personalize.Render(ok, map[string]any{"a": true})
	if err != nil || got != "x" {
		t.Fatalf("Render(200 nested sections) = %q, %v", got, err)
	}
}

func TestPartials(t *testing.T) {
	t.Parallel()
	partials := map[string]string{
		"footer":  "<p>\n  {{#unsub}}\n  <a href=\"{{url}}\">Unsubscribe %FIRSTNAME%</a>\n  {{/unsub}}\n</p>\n",
		"loop":    "{{>loop}}",
		"tree":    "{{name}}{{#kids}}({{>tree}}){{/kids}}",
		"broken":  "ok",
		"numbers": "{{#n}}{{.}}{{/n}}",
	}
	tmpl, err := personalize.ParseWithPartials("<div>\n  {{>footer}}\n</div>\n{{>missing}}", partials)
	if err != nil {
		t.Fatal(err)
	}
	got, err := tmpl.Render(map[string]any{"unsub": map[string]any{"url": "https://x/?a=1&b=2"}, "%FIRSTNAME%": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	want := "<div>\n  <p>\n    <a href=\"https://x/?a=1&amp;b=2\">Unsubscribe Ada</a>\n  </p>\n</div>\n"
	if got != want {
		t.Fatalf("got  %q\nwant %q", got, want)
	}

	tree, err := personalize.ParseWithPartials("{{>tree}}", partials)
	if err != nil {
		t.Fatal(err)
	}
	// Leaves need "kids": a missing key would be looked up in the parent
	// context, as Mustache requires, and recurse forever.
	leaf := func(name string) map[string]any { return map[string]any{"name": name, "kids": []any{}} }
	got, err = tree.Render(map[string]any{"name": "r", "kids": []any{leaf("a"), map[string]any{"name": "b", "kids": []any{leaf("c")}}}})
	if err != nil || got != "r(a)(b(c))" {
		t.Fatalf("tree = %q, %v", got, err)
	}

	loop, err := personalize.ParseWithPartials("x{{>loop}}", partials)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := loop.Render(nil); err == nil || !strings.Contains(err.Error(), "partials nested more than") {
		t.Fatalf("recursive partial = %q, %v; want a depth error", got, err)
	}
	var sb strings.Builder
	if err := loop.Execute(&sb, nil); err == nil || sb.Len() != 0 {
		t.Fatalf("Execute of failing template wrote %q, err %v", sb.String(), err)
	}

	_, err = personalize.ParseWithPartials("ok", map[string]string{"bad": "line 1\n{{#open}}", "worse": "{{"})
	var se *personalize.SyntaxError
	if !errors.As(err, &se) || se.Partial != "bad" || se.Line != 2 || !strings.Contains(err.Error(), `in partial "bad"`) {
		t.Fatalf("error = %v, want SyntaxError in partial \"bad\" at line 2", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTemplateExecute(t *testing.T) {
	t.Parallel()
	tmpl, err := personalize.Parse("Hi {{name}} %ID%")
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := tmpl.Execute(&sb, map[string]any{"name": "<Ada>", "%ID%": 7}); err != nil {
		t.Fatal(err)
	}
	if got := sb.String(); got != "Hi &lt;Ada&gt; 7" {
		t.Fatalf("Execute wrote %q", got)
	}
	if err := tmpl.Execute(failWriter{}, nil); err == nil || err.Error() != "disk full" {
		t.Fatalf("Execute to failing writer = %v", err)
	}
	var nilT *personalize.Template
	if _, err := nilT.Render(nil); err == nil {
		t.Fatal("nil Template rendered without error")
	}
	if err := nilT.Execute(&sb, nil); err == nil {
		t.Fatal("nil Template executed without error")
	}
}

// One Template is shared by concurrent sends; run with -race.
func TestTemplateConcurrent(t *testing.T) {
	t.Parallel()
	tmpl, err := personalize.Parse("{{#items}}{{name}}:%ID%;{{/items}}")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				vars := map[string]any{"%ID%": g, "items": []any{map[string]any{"name": i}}}
				got, err := tmpl.Render(vars)
				if want := fmt.Sprintf("%d:%d;", i, g); err != nil || got != want {
					errs <- fmt.Errorf("goroutine %d: got %q, %v; want %q", g, got, err, want)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
