package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// envBrowserCheck is set by .ci/run, which installs a browser: there the inbox's browser
// check fails instead of skipping when it finds none.
const envBrowserCheck = "SENDLOOP_BROWSER_CHECK"

var inboxScreenshot = flag.String("inbox-screenshot", "", "save a screenshot of the inbox's message view to `FILE` (TestInboxInARealBrowser)")

// findBrowser returns Chromium's or Chrome's program: $CHROME, else chromium, google-chrome
// or chromium-browser on the PATH.
func findBrowser() string {
	if c := os.Getenv("CHROME"); c != "" {
		return c
	}
	for _, name := range []string{"chromium", "google-chrome", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// outsideServer stands for the rest of the world: it counts every request, by path.
type outsideServer struct {
	*httptest.Server
	hints string // the URL of a countingServer for the control's hints
	mu    sync.Mutex
	paths []string
}

func newOutsideServer(t *testing.T, hints string) *outsideServer {
	o := &outsideServer{hints: hints}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		o.mu.Lock()
		o.paths = append(o.paths, r.URL.Path)
		o.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/page/") {
			// The positive control: the same hostile HTML served with no policy.
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, hostileBody(o.URL, "control")+hintsBody(o.hints))
		}
	}))
	t.Cleanup(o.Close)
	return o
}

// countingServer is an outside server that counts the TCP connections it accepts, not
// only requests: a browser opens a connection for a resource hint (preconnect) or a
// frame's source before any request, or without one, and that connection alone tells
// the sender when and from where a message was viewed.
type countingServer struct {
	*httptest.Server
	accepts atomic.Int64
}

// countingListener counts the connections its listener accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func newCountingServer(t *testing.T) *countingServer {
	c := &countingServer{Server: httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))}
	c.Listener = countingListener{Listener: c.Listener, n: &c.accepts}
	c.Start()
	t.Cleanup(c.Close)
	return c
}

// hintsBody asks a browser to open connections to watch that a Content-Security-Policy
// stops too late or not at all: resource hints, a prefetch and preloads, and frames.
func hintsBody(watch string) string {
	return `<link rel="preconnect" href="` + watch + `/"><link rel="dns-prefetch" href="` + watch + `/">` +
		`<link rel="prefetch" href="` + watch + `/prefetch"><link rel="preload" as="image" href="` + watch + `/preload.png">` +
		`<link rel="modulepreload" href="` + watch + `/module.js"><link rel="prerender" href="` + watch + `/prerender">` +
		`<iframe src="` + watch + `/iframe"></iframe><iframe srcdoc="<img src=` + watch + `/srcdoc.png>"></iframe>`
}

// requested returns the paths requested that start with prefix.
func (o *outsideServer) requested(prefix string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for _, p := range o.paths {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

// hostileBody is a message's HTML that, if anything of it ran or loaded, would mark its
// document and request tagged paths of the outside server: an inline script, a script and
// an image from outside, an onerror handler, a stylesheet and a background image.
func hostileBody(outside, tag string) string {
	u := outside + "/" + tag
	return `<html><head><link rel="stylesheet" href="` + u + `/style.css"></head>` +
		`<body><p>Hello {{FIRST}}</p>` +
		`<script>document.title = "ran"; document.documentElement.setAttribute("data-" + "pwned", "inline"); new Image().src = "` + u + `/inline-script-ran";</script>` +
		`<script src="` + u + `/script.js"></script>` +
		`<img src="` + u + `/image.png" alt="remote">` +
		`<img src="x:broken" onerror="document.documentElement.setAttribute('data-' + 'pwned', 'onerror'); new Image().src = '` + u + `/onerror-ran'">` +
		`<div style="background:url(` + u + `/background.png)">styled</div>` +
		`</body></html>`
}

// TestInboxInARealBrowser opens the inbox of a real `sendloop fake` in headless Chromium
// after a send of personalised messages, one of them hostile, and proves that the inbox
// shows them while no script of a message ran and nothing was loaded from elsewhere.
func TestInboxInARealBrowser(t *testing.T) {
	t.Parallel()
	browser := findBrowser()
	if browser == "" {
		if os.Getenv(envBrowserCheck) != "" {
			t.Fatalf("%s is set but no browser was found ($CHROME, chromium, google-chrome)", envBrowserCheck)
		}
		t.Skipf("no browser ($CHROME, chromium, google-chrome); .ci/run installs one and sets %s", envBrowserCheck)
	}
	controlWatch, watch := newCountingServer(t), newCountingServer(t)
	outside := newOutsideServer(t, controlWatch.URL)
	b := startHeadless(t, browser)

	// The control: the browser runs scripts and loads images where no policy forbids it,
	// so that their absence below means the inbox stopped them.
	// The pages load at once, each as soon as what it shows exists.
	control := b.open(outside.URL+"/page/control", false)

	p := startFake(t, false)
	dir := t.TempDir()
	csv := filepath.Join(dir, "recipients.csv")
	require.NoError(t, os.WriteFile(csv, []byte("EmailAddress,FIRST\nann@example.com,Ann\nbob@example.com,Bob\nzoe@example.com,Zoë\n"), 0o600))
	html := filepath.Join(dir, "body.html")
	require.NoError(t, os.WriteFile(html, []byte(hostileBody(outside.URL, "message")+hintsBody(watch.URL)), 0o600))
	r := invocation{args: []string{"send", "--from", "shop@example.com", "--no-unsubscribe", "--recipients", csv, "--journal", filepath.Join(dir, "journal"),
		"--subject", "Grüße, {{FIRST}} ✓", "--text", "-", "--html", html}, env: p.env, stdin: "Hello {{FIRST}}"}.run(t)
	expect(t, r, exitOK, nil, nil)

	inbox := b.open(p.get(envFakeInbox), false)

	// The message view, logged in afresh (each page has a browser context of its own).
	r = invocation{args: []string{"fake", "messages", "--to", "zoe@"}, env: p.env}.run(t)
	expect(t, r, exitOK, []string{"Grüße, Zoë ✓"}, nil)
	id := strings.Fields(strings.Split(strings.TrimSpace(r.stdout), "\n")[1])[0]
	login := func(next string) string {
		r := invocation{args: []string{"fake", "inbox"}, env: p.env}.run(t)
		expect(t, r, exitOK, nil, nil)
		return strings.TrimSpace(r.stdout) + "&next=" + url.QueryEscape(next)
	}
	view := b.open(login("/_fake/inbox/message/"+id), *inboxScreenshot != "")
	// The frame's document on its own: its policy still runs nothing and loads nothing.
	frame := b.open(login("/_fake/inbox/message/"+id+"/html"), false)

	pg := control()
	assert.Contains(t, pg.dom, `data-pwned="`, "the browser ran the control's script")
	assert.NotEmpty(t, outside.requested("/control/"), "the browser loaded the control's resources")
	assert.Positive(t, controlWatch.accepts.Load(), "the browser connected for the control's hints and frames")

	pg = inbox()
	for _, want := range []string{"Grüße, Ann ✓", "Grüße, Bob ✓", "Grüße, Zoë ✓", "3 of 3 messages"} {
		assert.Contains(t, pg.dom, want, "the inbox lists the rendered subjects")
	}
	assert.Contains(t, pg.dom, "<title>Messages · sendloop fake</title>")

	pg = view()
	assert.Contains(t, pg.dom, "<title>Grüße, Zoë ✓ · sendloop fake</title>", "the title is the page's own")
	// The serialized DOM is the top document's: the frame tree shows the frame's loaded.
	require.Len(t, pg.frames, 1, "one frame")
	assert.True(t, strings.HasSuffix(pg.frames[0], "/_fake/inbox/message/"+id+"/html"), "the browser loaded the frame's HTML: %s", pg.frames[0])
	assert.Regexp(t, `<iframe[^>]*\ssandbox=""[^>]*src="/_fake/inbox/message/`+id+`/html"`, pg.dom, "the HTML is in a sandboxed frame")
	assert.NotContains(t, pg.dom, "allow-scripts")
	assert.NotContains(t, pg.dom, `data-pwned="`)
	assert.Contains(t, pg.dom, "Hello Zoë", "the text part")
	if *inboxScreenshot != "" {
		require.NoError(t, os.WriteFile(*inboxScreenshot, pg.png, 0o644))
	}

	pg = frame()
	assert.Contains(t, pg.dom, "Hello Zoë", "the rendered HTML")
	assert.NotContains(t, pg.dom, `data-pwned="`, "no script ran")
	assert.NotContains(t, pg.dom, "<title>ran</title>")

	assert.Empty(t, outside.requested("/message/"), "the outside server received requests from the message")
	assert.Zero(t, watch.accepts.Load(), "the browser connected for the message's resource hints or frames")
}
