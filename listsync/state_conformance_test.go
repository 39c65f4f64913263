package listsync_test

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/statetest"
)

// TestStateStoreConformance runs the state stores' suite against the file, the default
// store whose behaviour the suite pins, and against a StateStore in memory: the exported
// seam gives a store elsewhere than the file the same runs.
func TestStateStoreConformance(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		options func(dir string) func(t *testing.T, name string) listsync.StateOptions
	}{
		{name: "file", options: func(dir string) func(t *testing.T, name string) listsync.StateOptions {
			return func(t *testing.T, name string) listsync.StateOptions {
				return listsync.StateOptions{Path: filepath.Join(dir, t.Name(), name+".state")}
			}
		}},
		{name: "memory", options: func(string) func(t *testing.T, name string) listsync.StateOptions {
			states := &memStates{byName: map[string]*memState{}}
			return func(t *testing.T, name string) listsync.StateOptions {
				st := states.get(t.Name() + "/" + name)
				t.Cleanup(func() {
					st.mu.Lock()
					defer st.mu.Unlock()
					assert.False(t, st.held, "every run unlocks the state")
				})
				return listsync.StateOptions{Path: name, Store: st}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			statetest.Run(t, statetest.Store{Options: tt.options(t.TempDir())})
		})
	}
}

// memStates are StateStores in memory, by name: what a database does, in a map.
type memStates struct {
	mu     sync.Mutex
	byName map[string]*memState
}

func (m *memStates) get(name string) *memState {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byName[name] == nil {
		m.byName[name] = &memState{}
	}
	return m.byName[name]
}

type memState struct {
	mu    sync.Mutex
	held  bool
	state []byte // nil: none
	inUse bool
}

func (s *memState) Lock(context.Context) (func(), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		return nil, listsync.ErrStateInUse
	}
	s.held = true
	return func() { s.mu.Lock(); s.held = false; s.mu.Unlock() }, nil
}

func (s *memState) Read(context.Context) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == nil {
		return nil, false, fs.ErrNotExist
	}
	return bytes.Clone(s.state), s.inUse, nil
}

func (s *memState) Write(_ context.Context, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state, s.inUse = bytes.Clone(b), false
	return nil
}

func (s *memState) Mark(_ context.Context, inUse bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != nil {
		s.inUse = inUse
	}
	return nil
}

var _ listsync.StateStore = (*memState)(nil)
