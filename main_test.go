package sendloop_test

import (
	"flag"
	"os"
	"testing"

	"github.com/go-sendloop/sendloop/internal/testkit"
)

// TestMain lets more tests run at once than -parallel's default: several wait seconds on a
// per-attempt timeout, far above a call to the fake, so that a loaded machine cannot make
// the retry time out too.
func TestMain(m *testing.M) {
	flag.Parse()
	testkit.ParallelWaits()
	os.Exit(m.Run())
}
