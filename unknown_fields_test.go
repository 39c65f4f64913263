package sendloop

import (
	"slices"
	"sync"
	"testing"

	"github.com/go-sendloop/sendloop/internal/wire"
)

// TestUnknownFieldsReachTheHook checks that the generated decoders hand the keys they do
// not read to the wire package's hook, and only those. Not parallel: the hook is global.
func TestUnknownFieldsReachTheHook(t *testing.T) {
	var (
		mu  sync.Mutex
		got []string
	)
	wire.SetUnknownFieldHook(func(record, key string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, record+"."+key)
	})
	t.Cleanup(func() { wire.SetUnknownFieldHook(nil) })
	tests := []struct {
		name string
		into interface{ UnmarshalJSON([]byte) error }
		json string
		want []string
	}{
		{"known keys only", new(List), `{"ListID":"7","Name":"A"}`, nil},
		{"an unknown key", new(List), `{"ListID":"7","NewThing":{"a":[1]},"Name":"A"}`, []string{"List.NewThing"}},
		{"another record", new(SuppressionEntry), `{"EmailAddress":"a@example.com","Later":1}`, []string{"SuppressionEntry.Later"}},
		// Subscriber keeps every other key in its extra map: nothing is unknown.
		{"a record with an extra map", new(Subscriber), `{"SubscriberID":"1","CustomField3":"x","Other":"y"}`, nil},
	}
	for _, tt := range tests {
		mu.Lock()
		got = nil
		mu.Unlock()
		if err := tt.into.UnmarshalJSON([]byte(tt.json)); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		mu.Lock()
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: hook saw %q, want %q", tt.name, got, tt.want)
		}
		mu.Unlock()
	}
}
