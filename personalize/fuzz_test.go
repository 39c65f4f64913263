package personalize_test

import (
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop/personalize"
)

// fuzzVars has lists of at most one element: nested sections over longer
// lists are exponential by design, which is slow, not a bug.
var fuzzVars = map[string]any{
	"%NAME%":  "Ada {{name}} %CODE%",
	"%CODE%":  "<X&Y>",
	"%EMPTY%": "",
	"name":    `O'Brien & "Sons" %NAME% {{name}}`,
	"n":       1.5,
	"i":       3,
	"t":       true,
	"f":       false,
	"nil":     nil,
	"list":    []any{map[string]any{"name": "item", "list": []any{}}},
	"strs":    []string{"s"},
	"m":       map[string]any{"a": map[string]any{"b": "deep"}, "name": "inner"},
	"sm":      map[string]string{"k": "v"},
}

// fuzzReplacer is what the merge tags alone must do: for a template without
// Mustache tags, Render is exactly a strings.Replacer over the %KEY% vars.
var fuzzReplacer = strings.NewReplacer("%NAME%", "Ada {{name}} %CODE%", "%CODE%", "<X&Y>", "%EMPTY%", "")

func FuzzRender(f *testing.F) {
	for _, seed := range []string{
		"",
		"plain text, no tags at all\n",
		"50% off, 100%, %% and %%% { } }} {",
		"Hi %NAME%, your code is %CODE%%CODE%. %UNKNOWN% %A%NAME%",
		"%NAME%{{name}}%CODE%",
		"{{name}} {{{name}}} {{& name}} {{n}} {{i}} {{t}} {{nil}} [{{missing}}]",
		"{{#list}}{{name}}{{#list}}x{{/list}}{{/list}}{{^list}}empty{{/list}}",
		"{{#strs}}({{.}}){{/strs}}{{#m}}{{a.b}}{{name}}{{/m}}{{sm.k}}{{m.a.b}}",
		"<ul>\n  {{#list}}\n  <li>{{name}}</li>\n  {{/list}}\n</ul>\r\n  {{! comment }}\r\n",
		"{{=<% %>=}}<%name%> {{name}} <%={{ }}=%>{{name}}",
		"{{=% %=}}%name% %NAME%",
		"{{>partial}} {{> }}",
		"{{#a}}{{/b}}", "{{#a}}", "{{/a}}", "{{name", "{{{name}}", "{{=<%=}}", "{{a..b}}", "{{}}",
		"{{#t}}{{#f}}{{/f}}{{^f}}%NAME%{{/f}}{{/t}}",
		"{{! unclosed comment", "{{{{{}}}}}", "{{&}}", "{{=   =}}",
		"héllo wörld {{name}} ✓ %NAME%",
		strings.Repeat("{{#t}}", 300) + strings.Repeat("{{/t}}", 300),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, tmpl string) {
		got, err := personalize.Render(tmpl, fuzzVars)
		if strings.Contains(tmpl, "{{") {
			if err == nil {
				// A template that parses renders the same every time.
				again, err2 := personalize.Render(tmpl, fuzzVars)
				if err2 != nil || again != got {
					t.Fatalf("Render(%q) not deterministic: %q then %q, %v", tmpl, got, again, err2)
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("Render(%q) without Mustache tags failed: %v", tmpl, err)
		}
		if want := fuzzReplacer.Replace(tmpl); got != want {
			t.Fatalf("Render(%q)\n got: %q\nwant: %q", tmpl, got, want)
		}
		if !strings.Contains(tmpl, "%") && got != tmpl {
			t.Fatalf("Render(%q) without tags = %q, want the input", tmpl, got)
		}
	})
}

// FuzzTags checks that every tag Tags reports lies within the template, in order, and that
// a merge candidate's bytes are the %NAME% it names.
func FuzzTags(f *testing.F) {
	for _, seed := range []string{"", "Hi {{A}} %B% {{#C}}{{D}}{{/C}}", "{{=<% %>=}}<%X%> %Y%", "%A%B% 50% off %2F%", "{{>p}}{{^q}}{{.}}{{/q}}"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		tmpl, err := personalize.Parse(src)
		if err != nil {
			return
		}
		last := -1
		for _, tag := range tmpl.Tags() {
			if tag.Offset < last || tag.Offset >= len(src) || tag.Line < 1 || tag.Col < 1 {
				t.Fatalf("Tags(%q): %+v out of place (last offset %d)", src, tag, last)
			}
			last = tag.Offset
			if tag.Kind == personalize.TagMerge && src[tag.Offset:tag.End] != "%"+tag.Name+"%" {
				t.Fatalf("Tags(%q): merge %+v is %q", src, tag, src[tag.Offset:tag.End])
			}
		}
	})
}
