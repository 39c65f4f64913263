package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// Progress display.
const (
	ttyRedraw    = 100 * time.Millisecond // a terminal's progress line is redrawn this often
	barWidth     = 24
	defaultWidth = 80 // columns, when the terminal does not say
)

// progress reports the progress of a long step on stderr when it is a terminal: a bar and a
// label redrawn in place, cut to the terminal's width, and erased when the step ends.
// Elsewhere (a pipe, a file, /dev/null, TERM=dumb) it draws nothing: a CI log gets no
// control characters. Phases run one at a time; set and add may be called from any
// goroutine.
type progress struct {
	w        io.Writer
	tty      bool
	off      bool
	interval time.Duration
	width    func() int // the terminal's columns, 0 when unknown

	done, total atomic.Int64

	mu      sync.Mutex // guards the fields below and writes to w
	label   func(done, total int64) string
	shown   bool // the terminal line shows the bar
	stop    chan struct{}
	stopped chan struct{}
}

// newProgress returns the progress of a command: drawn when tty (stderr is a terminal that
// is not TERM=dumb) and not quiet.
func newProgress(w io.Writer, tty, quiet bool) *progress {
	return &progress{w: w, tty: tty, off: quiet || !tty, interval: ttyRedraw, width: stderrWidth}
}

// stderrWidth returns the width of the terminal on stderr, 0 when unknown.
func stderrWidth() int {
	w, _, err := term.GetSize(int(os.Stderr.Fd()))
	if err != nil {
		return 0
	}
	return w
}

// fit cuts a progress line to the terminal's width, keeping a column free so that the
// cursor does not wrap.
func fit(line string, width int) string {
	if width <= 0 {
		width = defaultWidth
	}
	if utf8.RuneCountInString(line) < width {
		return line
	}
	r := []rune(line)
	return string(r[:max(width-2, 0)]) + "…"
}

// start begins a phase of total units (0 when unknown), described by label.
func (p *progress) start(total int64, label func(done, total int64) string) {
	p.finish()
	p.done.Store(0)
	p.total.Store(total)
	if p.off {
		return
	}
	p.mu.Lock()
	p.label = label
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	stop, stopped := p.stop, p.stopped
	p.mu.Unlock()
	go func() {
		defer close(stopped)
		// Drawn at once, so that a phase shorter than the interval is seen too.
		p.draw()
		t := time.NewTicker(p.interval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				p.draw()
			}
		}
	}()
}

func (p *progress) set(n int64) { p.done.Store(n) }
func (p *progress) add(n int64) { p.done.Add(n) }

// draw writes the current state.
func (p *progress) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.label == nil {
		return
	}
	done, total := p.done.Load(), p.total.Load()
	fmt.Fprintf(p.w, "\r\x1b[K%s", fit(bar(done, total)+p.label(done, total), p.width()))
	p.shown = true
}

// finish ends the phase: the terminal line is erased.
func (p *progress) finish() {
	p.mu.Lock()
	stop, stopped := p.stop, p.stopped
	p.stop, p.stopped = nil, nil
	p.mu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-stopped
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
	p.label = nil
}

// Write writes b on the progress's stream, erasing the terminal's progress line first so
// that messages do not mix with it; the next redraw shows it again below them.
func (p *progress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		if _, err := io.WriteString(p.w, "\r\x1b[K"); err != nil {
			return 0, err
		}
		p.shown = false
	}
	return p.w.Write(b)
}

// bar draws "[#####.....]  45% " for a known total, nothing otherwise.
func bar(done, total int64) string {
	if total <= 0 {
		return ""
	}
	done = min(max(done, 0), total)
	filled := int(done * barWidth / total)
	return fmt.Sprintf("[%s%s] %3d%% ", strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), done*100/total)
}

// percent formats done/total as a percentage, "?" without a total.
func percent(done, total int64) string {
	if total <= 0 {
		return "?"
	}
	return fmt.Sprintf("%d%%", min(done, total)*100/total)
}

// startProgress sends everything the app writes on stderr through a new progress line,
// which keeps the terminal's line apart from the messages, until the returned func ends it.
func (a *app) startProgress() (*progress, func()) {
	prog := newProgress(a.stderr, a.stderrTTY, a.quiet)
	stderr := a.stderr
	a.stderr = prog
	return prog, func() {
		prog.finish()
		a.stderr = stderr
	}
}
