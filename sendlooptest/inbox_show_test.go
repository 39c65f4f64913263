package sendlooptest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop/smtp"
)

// hintingHTML asks a browser to open connections the policy does not stop in time.
const hintingHTML = `<html><head><link rel="preconnect" href="http://192.0.2.1/"><LINK rel=dns-prefetch href=//192.0.2.1>` +
	`<link rel="prefetch" href="http://192.0.2.1/p"><link rel=preload as=image href="http://192.0.2.1/i.png">` +
	`<meta http-equiv="refresh" content="0;url=http://192.0.2.1/r"></head>` +
	`<body><p>Hi {{FIRST}}</p><iframe src="http://192.0.2.1/frame"></iframe><frame src="http://192.0.2.1/f"></body></html>`

// TestInboxServesNeutralizedHTML: the frame's document holds no resource hint, preload,
// frame or meta element, while the messages API keeps the HTML as rendered.
func TestInboxServesNeutralizedHTML(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	ids := f.send(t, &smtp.Message{From: "shop@example.com", To: []string{"eve@example.com"}, Subject: "Hints",
		Text: "Hi", HTML: hintingHTML, Headers: smtp.Headers{MergeVars: smtp.MergeVars(map[string]string{"FIRST": "Eve"})}})
	require.Len(t, ids, 1)
	b := login(t, f)
	resp, html := b.get(t, "/inbox/message/1/html")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, html, "<p>Hi Eve</p>")
	assert.Equal(t, "off", resp.Header.Get("X-DNS-Prefetch-Control"))
	for _, tag := range []string{"<link", "<iframe", "<frame", "<meta"} {
		assert.NotContains(t, strings.ToLower(html), tag)
	}

	var m struct{ HTML string }
	f.get(t, "/api/v1/message/1", &m)
	assert.Equal(t, strings.ReplaceAll(hintingHTML, "{{FIRST}}", "Eve"), m.HTML, "the API's HTML stays as rendered")
}

// TestInboxShowsFromTagsAndCustomFields: the message list names the sender and the tags;
// the lists page the custom fields and their values, and how to page through the rest.
func TestInboxShowsFromTagsAndCustomFields(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	f.send(t, greeting("ann@example.com", "Ann"))
	seed, err := ReadSeed(strings.NewReader(`{"lists": [{"id": 7, "name": "Customers", "custom_fields": [{"id": 3, "name": "Company"}],
		"subscribers": [{"email": "ann@example.com", "fields": {"Company": "Acme"}}]}]}`))
	require.NoError(t, err)
	require.NoError(t, f.srv.LoadSeed(seed))
	b := login(t, f)

	_, page := b.get(t, "/inbox/")
	assert.Contains(t, page, `<td class="from">Shop &lt;shop@example.com&gt;</td>`)
	assert.Contains(t, page, `<td class="tags">news</td>`)

	_, page = b.get(t, "/inbox/lists")
	assert.Contains(t, page, "Custom fields: Company (CustomField3)")
	assert.Contains(t, page, "<th>Company</th>")
	assert.Contains(t, page, "<td>Acme</td>")
	assert.NotContains(t, page, "has them all")
}

// TestInboxListsPageSaysHowToPage: beyond the members it shows, the lists page names the
// members endpoint's paging.
func TestInboxListsPageSaysHowToPage(t *testing.T) {
	t.Parallel()
	f := newControlFake(t)
	fakeList(t, f.srv, "n", membersShown+3)
	b := login(t, f)
	_, page := b.get(t, "/inbox/lists")
	assert.Contains(t, page, "3 more records not shown: page through them with GET /_fake/lists/1/members?start=200&amp;limit=100 (limit=0: all at once).")
}
