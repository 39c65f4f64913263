package personalize

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// specDir holds the Mustache specification's conformance suites (v1.x core
// modules, JSON form), vendored with their MIT license so that every clone
// runs them.
const specDir = "testdata/mustache-spec"

// specSuites must all pass; partials.json is run too since partials are
// supported, and two delimiters tests need them anyway.
var specSuites = []string{"interpolation", "sections", "inverted", "comments", "delimiters", "partials"}

type specFile struct {
	Tests []struct {
		Name     string            `json:"name"`
		Desc     string            `json:"desc"`
		Data     any               `json:"data"`
		Template string            `json:"template"`
		Partials map[string]string `json:"partials"`
		Expected string            `json:"expected"`
	} `json:"tests"`
}

func TestMustacheSpec(t *testing.T) {
	t.Parallel()
	counts := make([]struct{ total, passed atomic.Int32 }, len(specSuites))
	// The counts are reported after the parallel subtests have finished.
	t.Cleanup(func() {
		var total, passed int32
		for i, s := range specSuites {
			n, p := counts[i].total.Load(), counts[i].passed.Load()
			total += n
			passed += p
			t.Logf("%-13s %3d/%d passed", s, p, n)
		}
		t.Logf("%-13s %3d/%d passed", "all", passed, total)
	})
	for i, suite := range specSuites {
		raw, err := os.ReadFile(filepath.Join(specDir, suite+".json"))
		if err != nil {
			t.Fatalf("reading suite %s: %v", suite, err)
		}
		var f, fn specFile
		if err := json.Unmarshal(raw, &f); err != nil {
			t.Fatalf("decoding suite %s: %v", suite, err)
		}
		// The same data decoded with UseNumber, as a caller may do to keep
		// large integers exact: numbers then arrive as json.Number.
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&fn); err != nil {
			t.Fatalf("decoding suite %s with UseNumber: %v", suite, err)
		}
		if len(f.Tests) == 0 || len(fn.Tests) != len(f.Tests) {
			t.Fatalf("suite %s: %d tests, %d with UseNumber", suite, len(f.Tests), len(fn.Tests))
		}
		for j, tc := range f.Tests {
			numData := fn.Tests[j].Data
			counts[i].total.Add(1)
			c := &counts[i].passed
			t.Run(suite+"/"+tc.Name, func(t *testing.T) {
				t.Parallel()
				tmpl, err := ParseWithPartials(tc.Template, tc.Partials)
				if err != nil {
					t.Fatalf("%s\nparse error: %v", tc.Desc, err)
				}
				for _, data := range []any{tc.Data, numData} {
					var got string
					if vars, ok := data.(map[string]any); ok {
						got, err = tmpl.Render(vars) // the public path
					} else {
						got, err = tmpl.render(data) // a root that is not an object
					}
					if err != nil {
						t.Fatalf("%s\nrender error: %v", tc.Desc, err)
					}
					if got != tc.Expected {
						t.Fatalf("%s\ntemplate: %q\ndata:     %#v\ngot:      %q\nwant:     %q", tc.Desc, tc.Template, data, got, tc.Expected)
					}
				}
				c.Add(1)
			})
		}
	}
}
