package sendlooptest

import (
	"crypto/x509"
	"net"
	"strings"
)

// RelayTLSNames adds host names or IP addresses to the certificate the fake relay presents
// for STARTTLS, besides 127.0.0.1, ::1 and localhost: for clients that reach it by another
// name, such as a CI service container's host name. Names are trimmed; empty ones are
// ignored.
func RelayTLSNames(names ...string) RelayOption {
	return func(c *relayConfig) {
		for _, n := range names {
			if n = strings.TrimSpace(n); n != "" {
				c.tlsNames = append(c.tlsNames, n)
			}
		}
	}
}

// addTLSNames adds the names to a certificate template: IP addresses as such, the others as
// DNS names.
func addTLSNames(cert *x509.Certificate, names []string) {
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			cert.IPAddresses = append(cert.IPAddresses, ip)
		} else {
			cert.DNSNames = append(cert.DNSNames, name)
		}
	}
}
