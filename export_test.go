package sendloop

import (
	"slices"
	"strings"

	"github.com/go-sendloop/sendloop/internal/commands"
)

// CommandTable lists the command table's names (lower case), for the external tests.
func CommandTable() []string {
	var names []string
	for _, spec := range commands.All() {
		names = append(names, strings.ToLower(spec.Name))
	}
	slices.Sort(names)
	return names
}
