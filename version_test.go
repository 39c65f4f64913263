package sendloop_test

import (
	"bufio"
	"os"
	"regexp"
	"testing"

	"github.com/go-sendloop/sendloop"
)

// releaseHeading is a released version's heading in CHANGELOG.md: "## [0.2.0] - 2026-11-24".
var releaseHeading = regexp.MustCompile(`^## \[(\d+\.\d+\.\d+[^\]]*)\] - (\d{4}-\d{2}-\d{2})$`)

// TestVersionIsTheNewestRelease holds the Version constant (the User-Agent's and the CLI's
// fallback) to the newest released section of the changelog, so that a release cannot
// leave one of them behind.
func TestVersionIsTheNewestRelease(t *testing.T) {
	t.Parallel()
	f, err := os.Open("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := releaseHeading.FindStringSubmatch(sc.Text()); m != nil {
			if m[1] != sendloop.Version {
				t.Errorf("CHANGELOG.md's newest release is %s, but sendloop.Version is %s", m[1], sendloop.Version)
			}
			return
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatal(`CHANGELOG.md has no released section ("## [x.y.z] - YYYY-MM-DD")`)
}
