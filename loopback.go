package sendloop

import "github.com/go-sendloop/sendloop/internal/transport"

// PlainHTTPError is NewClient's refusal of a plain http base URL whose host is not
// loopback (see WithInsecureHTTP): the API key would cross the network in clear text. A
// program matches it with errors.As to say so in its own words. It is the same type as
// legacy's refusal.
//
// PlainHTTPError is declared once, in an internal package, for both clients; go doc does
// not list the fields of such an alias, so here they are:
//
//	type PlainHTTPError struct {
//		Host string // the host and port of the base URL
//	}
type PlainHTTPError = transport.PlainHTTPError

// IsLoopback reports whether host (a name or an address, without a port) names this
// machine: localhost, a name under .localhost, or a loopback address. It is the rule by
// which NewClient accepts plain http without WithInsecureHTTP, and by which sendloop fake
// accepts a listening address without --listen-any.
func IsLoopback(host string) bool { return transport.IsLoopback(host) }
