package listsync

import (
	"bytes"
	"context"
	"io"
)

// StateStore keeps a sync's state somewhere else than in a local file: a row of a database
// (listsync/pgstate), say, so that a nightly sync on runners that keep no disk still plans
// from the last run's state. StateOptions.Store selects one; nil is the file at
// StateOptions.Path.
//
// A store holds opaque bytes: the state as the file holds it, encrypted and sealed under
// a key derived from the API key. It checks nothing of them. The checks that make a run
// fall back to a full one (another account, list or mapping, an old state, drift, a run
// that did not finish) are listsync's, on the bytes, whatever the store.
//
// What a store must guarantee:
//
//   - Lock gives one run at a time the state: while a run holds it, another run's Lock
//     (in this process or another, on this machine or another) returns an error matching
//     ErrStateInUse at once or after a short wait, never blocks until the holder ends.
//     The lock must not outlive its holder: a run that dies (kill -9, a lost runner)
//     releases it, as the file's flock does.
//   - Read returns the bytes of the last Write and whether the state is marked in use, or
//     an error matching fs.ErrNotExist when the store holds no state. The slice becomes
//     the run's (listsync may change it); the state is held in memory whole, about 22
//     bytes a member.
//   - Write replaces the state with the bytes given, whole or not at all (a run that dies
//     during it leaves the state before), and clears the in-use mark; it is durable when it
//     returns.
//   - Mark sets or clears the in-use mark of the state held, durably, without rewriting the
//     bytes; with no state held it does nothing. A run marks the state before its first
//     change and clears the mark (or writes a new state) once it has finished: a state
//     still marked is one a run may have left behind, and the next run does not trust it.
//
// The calls are made in turn by one run, between its Lock and the unlock it returned; a
// store's errors are reported as they are, and must hold no secret (a database password).
type StateStore interface {
	Lock(ctx context.Context) (unlock func(), err error)
	Read(ctx context.Context) (state []byte, inUse bool, err error)
	Write(ctx context.Context, state []byte) error
	Mark(ctx context.Context, inUse bool) error
}

// ErrStateInUse is matched by the error of a sync whose state another run holds: a
// StateStore's Lock returns an error matching it.
var ErrStateInUse = errStateLocked

// apiStore is a StateStore seen as the job's stateStore. The run's calls after Plan (the
// mark before Apply's first change, the state written after its last) must complete even
// as the run's context ends, as the file's do: they get ctx without its cancellation.
type apiStore struct {
	ctx context.Context
	s   StateStore
}

func (a apiStore) lock() (func(), error) { return a.s.Lock(a.ctx) }

func (a apiStore) open() (io.ReadCloser, error) {
	b, inUse, err := a.s.Read(context.WithoutCancel(a.ctx))
	if err != nil {
		return nil, err
	}
	// The mark is the store's, not the bytes': the byte the format keeps for it (outside
	// the seal) is set from it.
	if len(b) > stateMarkOffset && bytes.HasPrefix(b, []byte(stateMagic)) {
		b[stateMarkOffset] = 0
		if inUse {
			b[stateMarkOffset] = 1
		}
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (a apiStore) create() (stateSink, error) { return &apiSink{store: a}, nil }

func (a apiStore) mark(b byte) error { return a.s.Mark(context.WithoutCancel(a.ctx), b != 0) }

// apiSink holds a new version of the state in memory until commit hands it to the store
// whole: a store writes it in one piece (a row's value), not as a stream.
type apiSink struct {
	store apiStore
	buf   bytes.Buffer
}

func (w *apiSink) Write(b []byte) (int, error) { return w.buf.Write(b) }

func (w *apiSink) commit() error {
	return w.store.s.Write(context.WithoutCancel(w.store.ctx), w.buf.Bytes())
}

func (w *apiSink) abort() { w.buf = bytes.Buffer{} }
