package listsync

import (
	"bytes"
	"io"
	"io/fs"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memStore is a stateStore in memory: what a store elsewhere than a file (a database row)
// would do, with nothing of the job's logic changed.
type memStore struct {
	mu     sync.Mutex
	held   bool
	state  []byte // nil: no state
	writes int
}

func (m *memStore) lock() (func(), error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.held {
		return nil, errStateLocked
	}
	m.held = true
	return func() { m.mu.Lock(); m.held = false; m.mu.Unlock() }, nil
}

func (m *memStore) open() (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == nil {
		return nil, fs.ErrNotExist
	}
	return io.NopCloser(bytes.NewReader(bytes.Clone(m.state))), nil
}

func (m *memStore) create() (stateSink, error) { return &memSink{m: m}, nil }

func (m *memStore) mark(b byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.state) > stateMarkOffset && bytes.HasPrefix(m.state, []byte(stateMagic)) {
		m.state[stateMarkOffset] = b
	}
	return nil
}

type memSink struct {
	m   *memStore
	buf bytes.Buffer
}

func (s *memSink) Write(b []byte) (int, error) { return s.buf.Write(b) }

func (s *memSink) commit() error {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	s.m.state = bytes.Clone(s.buf.Bytes())
	s.m.writes++
	return nil
}

func (s *memSink) abort() {}

// TestStateInAnotherStore runs syncs with their state in a store of another kind: the
// first writes it, the second plans from it at a state run's cost, and a run that does not
// finish leaves it marked in use.
func TestStateInAnotherStore(t *testing.T) {
	t.Parallel()
	w := newStateWorld(t, 20)
	store := &memStore{}
	first := w.sync(t, Rows(rowsOf(20)), Options{}, StateOptions{store: store})
	assert.False(t, first.plan.State.Used)
	assert.Equal(t, "no state yet", first.plan.State.Reason)
	require.Equal(t, 1, store.writes, "the state is written to the store")

	rows := rowsOf(21)
	rows[3].Fields["Plan"] = "p1"
	second := w.sync(t, Rows(rows), Options{}, StateOptions{store: store})
	require.True(t, second.plan.State.Used, second.plan.State.Reason)
	assert.Zero(t, second.by["subscriber.browse"], "no member read")
	assert.Equal(t, 1, second.res.Adds.Done)
	assert.Equal(t, 1, second.res.Updates.Done)
	assert.Equal(t, 2, store.writes)
	assert.Equal(t, byte(0), store.state[stateMarkOffset], "a run that finished leaves no mark")

	require.NoError(t, store.mark(1))
	third := w.sync(t, Rows(rows), Options{}, StateOptions{store: store})
	assert.Equal(t, "marked in use by a run that did not finish", third.plan.State.Reason)
}
