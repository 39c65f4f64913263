package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Progress display intervals.
const (
	ttyRedraw   = 100 * time.Millisecond // a terminal's progress line is redrawn this often
	logInterval = 5 * time.Second        // elsewhere a log line is written this often
	barWidth    = 24
)

// progress reports the progress of a long step on stderr: on a terminal, a bar redrawn in
// place and erased when the step ends; elsewhere (a CI log, a file), a line every
// logInterval, and a last line when the step ends if any was written. Phases run one at a
// time; set and add may be called from any goroutine.
type progress struct {
	w        io.Writer
	tty      bool
	off      bool
	interval time.Duration

	done, total atomic.Int64

	mu      sync.Mutex // guards the fields below and writes to w
	label   func(done, total int64) string
	logged  bool // a log line was written in this phase
	shown   bool // the terminal line shows the bar
	stop    chan struct{}
	stopped chan struct{}
}

func newProgress(w io.Writer, tty, quiet bool) *progress {
	p := &progress{w: w, tty: tty, off: quiet, interval: logInterval}
	if tty {
		p.interval = ttyRedraw
	}
	return p
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
	p.label, p.logged = label, false
	p.stop, p.stopped = make(chan struct{}), make(chan struct{})
	stop, stopped := p.stop, p.stopped
	p.mu.Unlock()
	go func() {
		defer close(stopped)
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
	text := p.label(done, total)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s%s", bar(done, total), text)
		p.shown = true
		return
	}
	fmt.Fprintf(p.w, "sendloop: %s\n", text)
	p.logged = true
}

// finish ends the phase: the terminal line is erased; in a log, the final state is written
// if the phase logged anything.
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
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	} else if !p.tty && p.logged {
		fmt.Fprintf(p.w, "sendloop: %s\n", p.label(p.done.Load(), p.total.Load()))
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
