package sendloop

import (
	"slices"
	"strings"
)

// CommandTable lists the command table's names (lower case), for the external tests.
func CommandTable() []string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, strings.ToLower(name))
	}
	slices.Sort(names)
	return names
}
