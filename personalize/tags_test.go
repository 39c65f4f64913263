package personalize_test

import (
	"testing"

	"github.com/go-sendloop/sendloop/personalize"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTags(t *testing.T) {
	t.Parallel()
	type tag struct {
		Kind      personalize.TagKind
		Name      string
		Line, Col int
		Sections  []string
	}
	cases := []struct {
		name, src string
		want      []tag
	}{
		{"none", "plain text, 50% off", nil},
		{"both styles", "Hi {{FIRST}},\n%CODE% {{{RAW}}} {{& AMP }}", []tag{
			{personalize.TagEscaped, "FIRST", 1, 4, nil},
			{personalize.TagMerge, "CODE", 2, 1, nil},
			{personalize.TagRaw, "RAW", 2, 8, nil},
			{personalize.TagRaw, "AMP", 2, 18, nil},
		}},
		{"sections", "{{#VIP}}\nhi {{NAME}}{{^a.b}}{{.}}{{/a.b}}\n{{/VIP}}{{>p}}", []tag{
			{personalize.TagSection, "VIP", 1, 1, nil},
			{personalize.TagEscaped, "NAME", 2, 4, []string{"VIP"}},
			{personalize.TagInverted, "a.b", 2, 12, []string{"VIP"}},
			{personalize.TagEscaped, ".", 2, 20, []string{"VIP", "a.b"}},
			{personalize.TagPartial, "p", 3, 9, nil},
		}},
		{"overlap", "%A%B%", []tag{{personalize.TagMerge, "A", 1, 1, nil}, {personalize.TagMerge, "B", 1, 3, nil}}},
		{"delimiters", "{{=<% %>=}}<% X %> %Y%", []tag{{personalize.TagEscaped, "X", 1, 12, nil}, {personalize.TagMerge, "Y", 1, 20, nil}}},
		{"comment", "{{! %NO% }}é{{A}}", []tag{{personalize.TagEscaped, "A", 1, 13, nil}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tmpl, err := personalize.Parse(c.src)
			require.NoError(t, err)
			var got []tag
			for _, g := range tmpl.Tags() {
				got = append(got, tag{g.Kind, g.Name, g.Line, g.Col, g.Sections})
				if g.Kind == personalize.TagMerge {
					assert.Equal(t, "%"+g.Name+"%", c.src[g.Offset:g.End])
				} else {
					assert.Contains(t, c.src[g.Offset:g.End], g.Name)
				}
			}
			assert.Equal(t, c.want, got)
		})
	}
}

func TestTagKindString(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "{{#}}", personalize.TagSection.String())
	assert.Equal(t, "%%", personalize.TagMerge.String())
	assert.Equal(t, "unknown", personalize.TagKind(0).String())
}
