package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// headless is one headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ended by a NUL byte, ours on its fd 3, its own on
// fd 4). It shows several pages at once, each in a browser context of its own (cookies and
// storage apart, as in a profile of its own): a process per page took about 2 s of CPU
// each to start, most of the inbox test's cost.
type headless struct {
	t      *testing.T
	cmd    *exec.Cmd
	out    *os.File // the browser's fd 3
	stderr strings.Builder
	done   chan struct{} // closed when the browser's fd 4 ends

	mu      sync.Mutex
	next    int
	replies map[int]chan cdpMessage
	loads   map[string]chan struct{} // by session: Page.loadEventFired
}

// cdpMessage is a command, its reply or an event of the DevTools protocol.
type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// startHeadless starts the browser; it is closed when the test ends.
func startHeadless(t *testing.T, program string) *headless {
	t.Helper()
	toBrowser, ours, err := os.Pipe()
	require.NoError(t, err)
	theirs, fromBrowser, err := os.Pipe()
	require.NoError(t, err)
	h := &headless{t: t, out: ours, done: make(chan struct{}), replies: map[int]chan cdpMessage{}, loads: map[string]chan struct{}{}}
	h.cmd = exec.Command(program, "--headless", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
		"--no-first-run", "--no-default-browser-check", "--disable-background-networking", "--disable-extensions",
		"--disable-sync", "--no-proxy-server", "--remote-debugging-pipe", "--user-data-dir="+t.TempDir(), "about:blank")
	h.cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	h.cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser} // fds 3 and 4
	h.cmd.Stderr = &lockedWriter{w: &h.stderr}
	require.NoError(t, h.cmd.Start(), program)
	toBrowser.Close()
	fromBrowser.Close()
	go h.read(theirs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := h.call(ctx, "", "Browser.close", nil); err != nil {
			_ = h.cmd.Process.Kill()
		}
		ours.Close()
		_ = h.cmd.Wait()
	})
	return h
}

// lockedWriter serializes the writes of the browser's stderr with the reads of the test.
type lockedWriter struct {
	mu sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// read dispatches the browser's messages: replies to their callers, load events to the
// pages waiting for them.
func (h *headless) read(in *os.File) {
	defer close(h.done)
	defer in.Close()
	r := bufio.NewReader(in)
	for {
		b, err := r.ReadBytes(0)
		if err != nil {
			return
		}
		var m cdpMessage
		if json.Unmarshal(b[:len(b)-1], &m) != nil {
			continue
		}
		h.mu.Lock()
		switch {
		case m.ID != 0:
			if ch := h.replies[m.ID]; ch != nil {
				ch <- m
				delete(h.replies, m.ID)
			}
		case m.Method == "Page.loadEventFired":
			if ch := h.loads[m.SessionID]; ch != nil {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
		h.mu.Unlock()
	}
}

// call sends a command (to a page's session, or to the browser with session "") and
// returns its result.
func (h *headless) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	h.mu.Lock()
	h.next++
	id, reply := h.next, make(chan cdpMessage, 1)
	h.replies[id] = reply
	h.mu.Unlock()
	b, err := json.Marshal(cdpMessage{ID: id, SessionID: session, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	if _, err := h.out.Write(append(b, 0)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m := <-reply:
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		return m.Result, nil
	case <-h.done:
		return nil, fmt.Errorf("%s: the browser ended: %s", method, h.log())
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// log returns what the browser wrote on stderr.
func (h *headless) log() string {
	w := h.cmd.Stderr.(*lockedWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.String()
}

// must is call for the test's goroutine, decoding the result into out (if not nil).
func (h *headless) must(ctx context.Context, session, method string, params, out any) {
	h.t.Helper()
	res, err := h.call(ctx, session, method, params)
	require.NoError(h.t, err)
	if out != nil {
		require.NoError(h.t, json.Unmarshal(res, out), "%s: %s", method, res)
	}
}

// cdpNode is a node of the DOM as the protocol describes it.
type cdpNode struct {
	NodeID   int    `json:"nodeId"`
	NodeName string `json:"nodeName"`
}

// page is one page the browser loaded.
type page struct {
	dom    string   // the document's element as the browser serializes it after the load
	frames []string // the URLs of the page's child frames
	png    []byte   // a screenshot, if asked for
}

// open starts loading url in a new browser context and returns a function that waits for
// the load and returns the page.
func (h *headless) open(url string, screenshot bool) func() page {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	var bc struct {
		ID string `json:"browserContextId"`
	}
	h.must(ctx, "", "Target.createBrowserContext", map[string]any{}, &bc)
	var target struct {
		ID string `json:"targetId"`
	}
	h.must(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank", "browserContextId": bc.ID}, &target)
	var attached struct {
		Session string `json:"sessionId"`
	}
	h.must(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.ID, "flatten": true}, &attached)
	session, loaded := attached.Session, make(chan struct{}, 1)
	h.mu.Lock()
	h.loads[session] = loaded
	h.mu.Unlock()
	h.must(ctx, session, "Page.enable", nil, nil)
	h.must(ctx, session, "Page.navigate", map[string]any{"url": url}, nil)
	return func() page {
		h.t.Helper()
		defer cancel()
		select {
		case <-loaded:
		case <-ctx.Done():
			h.t.Fatalf("%s did not load: %s", url, h.log())
		}
		var p page
		var doc struct {
			Root struct {
				Children []cdpNode `json:"children"`
			} `json:"root"`
		}
		h.must(ctx, session, "DOM.getDocument", map[string]any{"depth": 1}, &doc)
		i := slices.IndexFunc(doc.Root.Children, func(c cdpNode) bool { return c.NodeName == "HTML" })
		require.GreaterOrEqual(h.t, i, 0, "%s: no document element", url)
		var html struct {
			OuterHTML string `json:"outerHTML"`
		}
		h.must(ctx, session, "DOM.getOuterHTML", map[string]any{"nodeId": doc.Root.Children[i].NodeID}, &html)
		p.dom = html.OuterHTML
		var tree struct {
			FrameTree struct {
				ChildFrames []struct {
					Frame struct {
						URL string `json:"url"`
					} `json:"frame"`
				} `json:"childFrames"`
			} `json:"frameTree"`
		}
		h.must(ctx, session, "Page.getFrameTree", nil, &tree)
		for _, c := range tree.FrameTree.ChildFrames {
			p.frames = append(p.frames, c.Frame.URL)
		}
		// A frame the browser isolated in a process of its own is a target of its own.
		var targets struct {
			Infos []struct {
				Type             string `json:"type"`
				URL              string `json:"url"`
				BrowserContextID string `json:"browserContextId"`
			} `json:"targetInfos"`
		}
		h.must(ctx, "", "Target.getTargets", nil, &targets)
		for _, info := range targets.Infos {
			if info.Type == "iframe" && info.BrowserContextID == bc.ID {
				p.frames = append(p.frames, info.URL)
			}
		}
		if screenshot {
			h.must(ctx, session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 1200, "height": 1400, "deviceScaleFactor": 1, "mobile": false}, nil)
			var shot struct {
				Data string `json:"data"`
			}
			h.must(ctx, session, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot)
			png, err := base64.StdEncoding.DecodeString(shot.Data)
			require.NoError(h.t, err)
			p.png = png
		}
		return p
	}
}
