package outcome

import (
	"errors"
	"strings"
	"testing"
)

func TestErrorWrapsBothFailures(t *testing.T) {
	t.Parallel()
	first, last := errors.New("reset by peer"), errors.New("error 125")
	err := error(&Error{Prefix: "sendloop: subscriber.subscribe", First: first, Last: last})
	for _, target := range []error{ErrUnknown, first, last} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
	for _, part := range []string{"sendloop: subscriber.subscribe: outcome unknown", "reset by peer", "error 125"} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("%q lacks %q", err, part)
		}
	}
}

func TestSettle(t *testing.T) {
	t.Parallel()
	first, answer := errors.New("timeout"), errors.New("error 106")
	if err := Settle("p", first, answer, func() error { return nil }); err != nil {
		t.Fatalf("a proved end state: %v", err)
	}
	readBack := errors.New("read-back failed")
	err := Settle("p", first, answer, func() error { return readBack })
	for _, target := range []error{ErrUnknown, first, answer, readBack} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
}
