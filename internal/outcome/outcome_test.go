package outcome

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestErrorWrapsTheFirstFailureOnly: the answer that caused the doubt and the read-back's
// failure are in the message and the fields, never matched by errors.Is.
func TestErrorWrapsTheFirstFailureOnly(t *testing.T) {
	t.Parallel()
	first := errors.Join(errors.New("reset by peer"), context.DeadlineExceeded)
	last, readBack := errors.New("error 125"), errors.New("read-back failed")
	tests := []struct {
		name    string
		err     *Error
		match   []error
		noMatch []error
		parts   []string
	}{
		{"first and last", &Error{Prefix: "sendloop: subscriber.subscribe", First: first, Last: last},
			[]error{ErrUnknown, first, context.DeadlineExceeded}, []error{last},
			[]string{"sendloop: subscriber.subscribe: outcome unknown", "first failure: reset by peer", "last answer: error 125"}},
		{"with a read-back", &Error{Prefix: "p", First: first, Last: last, ReadBack: readBack},
			[]error{ErrUnknown, first}, []error{last, readBack},
			[]string{"error 125", "the read-back does not prove the write: read-back failed"}},
		{"first only", &Error{First: first, Last: first},
			[]error{ErrUnknown, first}, nil,
			[]string{"outcome unknown"}},
		{"nothing but the sentinel", &Error{}, []error{ErrUnknown}, []error{first}, []string{ErrUnknown.Error()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := error(tt.err)
			for _, target := range tt.match {
				if !errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = false", err, target)
				}
			}
			for _, target := range tt.noMatch {
				if errors.Is(err, target) {
					t.Errorf("errors.Is(%v, %v) = true", err, target)
				}
			}
			for _, part := range tt.parts {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("%q lacks %q", err, part)
				}
			}
			if tt.err.Last == tt.err.First && strings.Contains(err.Error(), "last answer") {
				t.Errorf("%q repeats the first failure", err)
			}
		})
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
	for _, target := range []error{ErrUnknown, first} {
		if !errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = false", err, target)
		}
	}
	for _, target := range []error{answer, readBack} {
		if errors.Is(err, target) {
			t.Errorf("errors.Is(%v, %v) = true: only the first failure is wrapped", err, target)
		}
	}
	var oe *Error
	if !errors.As(err, &oe) || oe.Last != answer || oe.ReadBack != readBack {
		t.Errorf("the answer and the read-back's failure are not kept: %#v", err)
	}
}
