package legacy

import (
	"errors"

	"github.com/go-sendloop/sendloop/internal/transport"
)

// Observer is told of every command call a Client sends; it is the same type as
// sendloop.Observer, whose doc lists its methods and what it is given (never a key, a URL's
// path or query, a body or an error's text). The legacy client of a sendloop.Client shares
// the root client's (sendloop.WithObserver).
type Observer = transport.Observer

// WithObserver sets the Observer told of every call. nil, the default, observes nothing.
func WithObserver(o Observer) Option {
	return shared("WithObserver", o != nil, transport.ObserverSetting(o, errorCodeOf))
}

// errorCodeOf returns the legacy error code an error read from an answer carries.
func errorCodeOf(err error) int {
	if e, ok := errors.AsType[*Error](err); ok {
		return int(e.Code)
	}
	return 0
}
