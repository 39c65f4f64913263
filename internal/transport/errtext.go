package transport

import (
	"strconv"
	"strings"
)

// The texts of the errors every sendloop package makes start alike: "<package>: <command>: ",
// then what went wrong. These helpers write them once for the root and legacy packages.

// Describe starts an error text: "<pkg>: <command>: ", or "<pkg>: " without a command.
func Describe(pkg, command string) *strings.Builder {
	b := new(strings.Builder)
	b.WriteString(pkg)
	b.WriteString(": ")
	if command != "" {
		b.WriteString(command)
		b.WriteString(": ")
	}
	return b
}

// WriteCode writes "error <code>", then ": <message>" when message is not empty.
func WriteCode(b *strings.Builder, code int, message string) {
	b.WriteString("error ")
	b.WriteString(strconv.Itoa(code))
	if message != "" {
		b.WriteString(": ")
		b.WriteString(message)
	}
}

// CodeString returns "<code> (<meaning>)", or the code alone when meaning is empty.
func CodeString(code int, meaning string) string {
	if meaning != "" {
		return strconv.Itoa(code) + " (" + meaning + ")"
	}
	return strconv.Itoa(code)
}
