package sendlooptest

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// inboxLoginPath is where an inbox URL's one-time token logs a browser in.
const inboxLoginPath = "/inbox/login"

// sessionCookie names the inbox's session cookie.
const sessionCookie = "sendloop_fake_session"

// inboxLogin trades a one-time token for a session cookie and opens the inbox.
func (c *Control) inboxLogin(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	c.mu.Lock()
	valid := tok != "" && c.tokens[tok]
	delete(c.tokens, tok)
	var id string
	if valid {
		if len(c.sessions) >= controlLimit {
			clear(c.sessions)
		}
		id = randomHex(32)
		c.sessions[id] = session{csrf: randomHex(16)}
	}
	c.mu.Unlock()
	if !valid {
		inboxLoggedOut(w)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: id, Path: ControlPrefix + "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode})
	next := r.URL.Query().Get("next")
	if !safeNext(next) {
		next = ControlPrefix + "/inbox/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// safeNext accepts a page of the inbox only: no other site, no other path.
func safeNext(next string) bool {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || strings.ContainsAny(next, "\\\r\n") {
		return false
	}
	const inbox = ControlPrefix + "/inbox/"
	return strings.HasPrefix(u.Path, inbox) && strings.HasPrefix(path.Clean(u.Path)+"/", inbox)
}

// session returns the inbox session of the request's cookie.
func (c *Control) session(r *http.Request) (session, bool) {
	ck, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.sessions[ck.Value]
	return s, ok
}

// formTokenOK checks the form token of a request made with the session's cookie.
func (c *Control) formTokenOK(r *http.Request, s session) bool {
	tok := r.Header.Get("X-Sendloop-Form-Token")
	if tok == "" {
		tok = r.PostFormValue("form_token")
	}
	return tok != "" && subtle.ConstantTimeCompare([]byte(tok), []byte(s.csrf)) == 1
}

// inboxLoggedOut answers a browser without a session.
func inboxLoggedOut(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("Not logged in: open the SENDLOOP_FAKE_INBOX URL the fake printed (each one works once),\nor ask for a new one: sendloop fake inbox.\n"))
}
