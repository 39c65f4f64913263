package webhook

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop/internal/address"
	"github.com/go-sendloop/sendloop/internal/check"
)

// TokenHeader is the request header that may carry the shared token.
const TokenHeader = "X-Sendloop-Token"

// TokenParam is the URL query parameter that may carry the shared token.
// A webhook configured as a plain URL can only carry a secret this way.
const TokenParam = "token"

// Handler is an http.Handler that receives webhook deliveries, parses them
// and passes each Event to a callback. Create it with NewHandler; it is
// safe for concurrent use.
type Handler struct {
	fn          func(ctx context.Context, ev *Event) error
	maxBody     int64
	tokenSum    [sha256.Size]byte
	hasToken    bool
	defaultKind Kind
	logger      *slog.Logger
	listParam   string
	strictAddr  bool    // WithRejectInvalidAddress
	optErrs     []error // the options' refusals, returned by NewHandler
}

// Option configures a Handler. An option given a value it cannot take makes NewHandler
// return an error matching ErrInvalidOption.
type Option func(*Handler)

// ErrInvalidOption is matched (errors.Is) by the error NewHandler returns when an option
// was given a value it cannot take: an empty WithToken, an unknown WithDefaultKind, an
// empty or reserved WithListIDParam.
var ErrInvalidOption = errors.New("webhook: invalid option")

// refuse records an option's refusal for NewHandler to return.
func (h *Handler) refuse(option, reason string) {
	h.optErrs = append(h.optErrs, fmt.Errorf("%w: %s: %s", ErrInvalidOption, option, reason))
}

// WithMaxBodyBytes sets the body size limit; larger bodies are answered
// with 413. A limit of zero or less keeps DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(h *Handler) {
		if n > 0 {
			h.maxBody = n
		}
	}
}

// WithToken requires every request to carry token, in the TokenHeader
// header or else the TokenParam query parameter; requests without it, or
// with another value, are answered with 401. The comparison takes constant
// time. An empty token makes NewHandler return an error, so that a missing
// secret in the configuration cannot silently turn the check off.
func WithToken(token string) Option {
	return func(h *Handler) {
		if token == "" {
			h.refuse("WithToken", "empty token")
			return
		}
		h.tokenSum = sha256.Sum256([]byte(token))
		h.hasToken = true
	}
}

// WithDefaultKind sets the Kind of deliveries whose body has no action member.
// This suits a handler mounted only at a list's WebServiceSubscriptionURL
// (KindSubscription) or WebServiceUnsubscriptionURL (KindUnsubscription).
// An action present in the body still wins; an unknown one is still
// rejected. A k that is not a known Kind makes NewHandler return an error.
func WithDefaultKind(k Kind) Option {
	return func(h *Handler) {
		if !k.Valid() {
			h.refuse("WithDefaultKind", fmt.Sprintf("unknown kind %q", string(k)))
			return
		}
		h.defaultKind = k
	}
}

// WithListIDParam names the query parameter that carries the list ID. The service's callback
// names no list, so give each list its own callback URL (its WebServiceSubscriptionURL and
// WebServiceUnsubscriptionURL) with the list's ID in it, e.g. https://hooks.example.com/
// sendloop?list=12, and the Handler fills Event.ListID from it.
//
// Since the Handler then knows where the list ID is, it never passes on an event without
// one: a request is answered with 400 when the parameter is missing (or empty) and the
// body carries no list ID either, when a value is not a list ID, when the parameter is
// repeated with different values, and when it names another list than the body does. A
// body's list ID alone is accepted.
//
// An empty name, or TokenParam, makes NewHandler return an error.
func WithListIDParam(name string) Option {
	return func(h *Handler) {
		switch {
		case strings.TrimSpace(name) == "":
			h.refuse("WithListIDParam", "empty parameter name")
		case name == TokenParam:
			h.refuse("WithListIDParam", "the parameter "+strconv.Quote(name)+" carries the token")
		default:
			h.listParam = name
		}
	}
}

// WithRejectInvalidAddress makes the Handler answer 400 to an event whose
// Subscriber.EmailAddress is not an email address (Event.AddressValid is false), without
// calling the callback, for a receiver that prefers the service to see the delivery fail.
//
// By default such an event is passed on and answered 200: the address is the service's
// data, which refusing the delivery does not correct. The service's specification is
// silent on whether or how it retries a delivery answered 400, so a refused event may
// never come again: the list still holds the address, and only a sync or an export finds
// it.
func WithRejectInvalidAddress() Option {
	return func(h *Handler) { h.strictAddr = true }
}

// WithLogger makes the Handler log each rejected or failed delivery at
// Warn or Error and each accepted one at Debug. Records hold the method,
// the URL path (never the query, which may hold the token), the remote
// address, the kind and the subscriber id, but no email address. The
// default is not to log.
func WithLogger(l *slog.Logger) Option {
	return func(h *Handler) { h.logger = l }
}

// NewHandler returns a Handler that calls fn with each parsed Event and the
// request's context. An option given a bad value makes it return an error matching
// ErrInvalidOption (every such option is named in it) and no Handler. A nil fn is a
// programming error: NewHandler panics, as http.HandleFunc does.
//
// Responses, all with a short text/plain body:
//
//	200 fn returned nil (also for an address that is not one: see
//	    Event.AddressValid and WithRejectInvalidAddress)
//	400 not a webhook body, unparseable body, unknown or missing action,
//	    missing subscriber or email address, invalid value; with
//	    WithListIDParam a missing, invalid or conflicting list ID; with
//	    WithRejectInvalidAddress an address that is not one
//	401 token required and missing or wrong
//	405 method other than POST (with Allow: POST)
//	413 body over the limit
//	500 fn returned an error, which is logged but not sent, so that the
//	    sender may retry
//
// The service's retry and delivery guarantees are not published: a callback may come twice
// (after a lost answer, say), so fn must tolerate the same event posted again, e.g. by
// making its effect idempotent on the subscriber ID, kind and time.
func NewHandler(fn func(ctx context.Context, ev *Event) error, opts ...Option) (*Handler, error) {
	if fn == nil {
		panic("webhook: NewHandler with nil callback")
	}
	h := &Handler{fn: fn, maxBody: DefaultMaxBodyBytes}
	for _, opt := range opts {
		if opt != nil {
			opt(h)
		}
	}
	if err := errors.Join(h.optErrs...); err != nil {
		return nil, err
	}
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		h.reject(w, r, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if h.hasToken && !h.tokenOK(r) {
		h.reject(w, r, http.StatusUnauthorized, "unauthorized")
		return
	}
	if r.ContentLength > h.maxBody {
		h.reject(w, r, http.StatusRequestEntityTooLarge, "request body too large")
		return
	}

	var src io.ReadCloser = http.NoBody
	if r.Body != nil {
		src = r.Body
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, src, h.maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.reject(w, r, http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		h.reject(w, r, http.StatusBadRequest, "cannot read request body")
		return
	}

	ev, err := parseBody(r.Header.Get("Content-Type"), body, h.defaultKind)
	if err != nil {
		// The message names format and field only, never values.
		h.reject(w, r, http.StatusBadRequest, err.Error())
		return
	}
	if h.strictAddr && !ev.AddressValid {
		// address.Problem is CheckAddress's reason without the address, personal data.
		h.reject(w, r, http.StatusBadRequest, "webhook: EmailAddress: not an email address: "+address.Problem(ev.Subscriber.EmailAddress))
		return
	}
	if h.listParam != "" {
		id, reason := h.listID(r, ev.ListID)
		if reason != "" {
			h.reject(w, r, http.StatusBadRequest, reason)
			return
		}
		ev.ListID = id
	}

	if err := h.fn(r.Context(), ev); err != nil {
		h.log(r, slog.LevelError, "webhook callback failed", ev, slog.String("error", err.Error()))
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h.log(r, slog.LevelDebug, "webhook delivered", ev)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "OK\n")
}

// listID settles the list ID of a delivery from the WithListIDParam query parameter and
// the body's list ID (0: none), or says why the request is refused. Empty values of the
// parameter count as absent.
func (h *Handler) listID(r *http.Request, fromBody int) (id int, reason string) {
	param := "the " + h.listParam + " query parameter"
	for _, v := range r.URL.Query()[h.listParam] {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		switch {
		case err != nil || check.ID(n) != check.IDValid:
			return 0, "invalid list ID in " + param
		case id != 0 && n != id:
			return 0, "conflicting list IDs in " + param
		}
		id = n
	}
	switch {
	case id == 0 && fromBody == 0:
		return 0, "missing list ID: no " + h.listParam + " query parameter"
	case id == 0:
		return fromBody, ""
	case fromBody != 0 && fromBody != id:
		return 0, "list ID in " + param + " differs from the body's"
	}
	return id, ""
}

// tokenOK compares digests so that neither content nor length leaks
// through timing. The header wins over the query parameter when both are
// present.
func (h *Handler) tokenOK(r *http.Request) bool {
	got := r.Header.Get(TokenHeader)
	if got == "" {
		got = r.URL.Query().Get(TokenParam)
	}
	if got == "" {
		return false
	}
	sum := sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(sum[:], h.tokenSum[:]) == 1
}

func (h *Handler) reject(w http.ResponseWriter, r *http.Request, code int, reason string) {
	h.log(r, slog.LevelWarn, "webhook rejected", nil, slog.Int("status", code), slog.String("reason", reason))
	http.Error(w, reason, code)
}

func (h *Handler) log(r *http.Request, level slog.Level, msg string, ev *Event, attrs ...slog.Attr) {
	if h.logger == nil || !h.logger.Enabled(r.Context(), level) {
		return
	}
	all := make([]slog.Attr, 0, len(attrs)+5)
	all = append(all,
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.String("remote_addr", r.RemoteAddr),
	)
	if ev != nil {
		all = append(all, slog.String("kind", string(ev.Kind)), slog.Int("subscriber_id", ev.Subscriber.SubscriberID))
	}
	all = append(all, attrs...)
	h.logger.LogAttrs(r.Context(), level, msg, all...)
}
