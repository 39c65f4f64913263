package wire

import (
	"slices"
	"sync"
	"testing"
)

// TestUnknownFieldHook is not parallel: the hook is the package's one global.
func TestUnknownFieldHook(t *testing.T) {
	UnknownField("Rec", []byte("Before")) // no hook: nothing happens
	var (
		mu  sync.Mutex
		got []string
	)
	prev := SetUnknownFieldHook(func(record, key string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, record+"."+key)
	})
	if prev != nil {
		t.Fatal("a hook was set before the test")
	}
	key := []byte("Extra")
	UnknownField("Rec", key)
	key[0] = 'X' // the hook got a copy of the decoder's buffer
	UnknownField("Other", []byte("Y"))
	if old := SetUnknownFieldHook(nil); old == nil {
		t.Error("SetUnknownFieldHook(nil) did not return the hook it replaced")
	}
	UnknownField("Rec", []byte("After"))
	if want := []string{"Rec.Extra", "Other.Y"}; !slices.Equal(got, want) {
		t.Errorf("hook saw %q, want %q", got, want)
	}
}
