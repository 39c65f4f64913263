package listsync

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
)

const testStateKey = "k3y-for-the-state"

// keysOf returns the key deriver of a client of apiKey, as a sync's state takes it.
func keysOf(t testing.TB, apiKey string) keyDeriver {
	c, err := sendloop.NewClient(apiKey)
	if err != nil {
		if t == nil {
			panic(err)
		}
		t.Fatal(err)
	}
	return c.DeriveKey
}

// writeTestState writes entries to a state at path.
func writeTestState(t testing.TB, path, key string, h stateHeader, entries []stateEntry) {
	t.Helper()
	w, err := createState(path, keysOf(t, key), h)
	require.NoError(t, err)
	for _, e := range entries {
		require.NoError(t, w.add(e))
	}
	require.NoError(t, w.commit())
}

// readAllState reads a state whole.
func readAllState(src io.Reader, key string) (stateHeader, []stateEntry, error) {
	r, err := readState(src, keysOf(nil, key))
	if err != nil {
		return stateHeader{}, nil, err
	}
	var out []stateEntry
	for {
		e, err := r.next()
		if errors.Is(err, io.EOF) {
			return r.header, out, nil
		}
		if err != nil {
			return r.header, out, err
		}
		out = append(out, e)
	}
}

// testEntries returns n entries with addresses of many shapes.
func testEntries(n int, seed uint64) []stateEntry {
	rng := rand.New(rand.NewPCG(seed, 1))
	statuses := []string{statusSubscribed, statusSubscribed, statusSubscribed, statusUnsubscribed, "Confirmation Pending"}
	out := make([]stateEntry, n)
	for i := range out {
		out[i] = stateEntry{ID: 1000 + i, Email: fakeAddress(rng, i), Status: statuses[rng.IntN(len(statuses))],
			Values: rng.Uint64(), Unknown: rng.IntN(50) == 0}
	}
	return out
}

var (
	firstNames = []string{"anna", "bruno", "chen", "dmitri", "elif", "fatima", "giulia", "hiro", "ines", "jamal", "kofi", "lena", "mateo", "nora", "olu", "priya", "quentin", "rosa", "sven", "tariq"}
	lastNames  = []string{"smith", "garcia", "muller", "rossi", "nguyen", "kowalski", "okafor", "silva", "tanaka", "dubois", "jensen", "ivanova", "haddad", "oconnor", "yilmaz"}
	domains    = []string{"gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "gmx.de", "web.de", "orange.fr", "example.org", "acme-corp.com"}
)

// fakeAddress makes a plausible address, distinct for each i.
func fakeAddress(rng *rand.Rand, i int) string {
	f, l, d := firstNames[rng.IntN(len(firstNames))], lastNames[rng.IntN(len(lastNames))], domains[rng.IntN(len(domains))]
	switch rng.IntN(3) {
	case 0:
		return fmt.Sprintf("%s.%s%d@%s", f, l, i, d)
	case 1:
		return fmt.Sprintf("%s%c%d@%s", f, l[0], i, d)
	}
	return fmt.Sprintf("%s_%s.%x@%s", l, f, i*7919, d)
}

func TestStateFileRoundTrip(t *testing.T) {
	t.Parallel()
	h := stateHeader{BaseURL: "https://app.example.com/api/v3", ListID: 12, Mapping: 99, LastFull: time.Unix(1_800_000_000, 5)}
	for _, n := range []int{0, 1, 3000, 40000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state")
			entries := testEntries(n, uint64(n))
			writeTestState(t, path, testStateKey, h, entries)

			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			gotH, got, err := readAllState(f, testStateKey)
			require.NoError(t, err)
			assert.Equal(t, h.BaseURL, gotH.BaseURL)
			assert.Equal(t, h.ListID, gotH.ListID)
			assert.Equal(t, h.Mapping, gotH.Mapping)
			assert.True(t, h.LastFull.Equal(gotH.LastFull))
			if n == 0 {
				assert.Empty(t, got)
			} else {
				assert.Equal(t, entries, got)
			}

			info, err := os.Stat(path)
			require.NoError(t, err)
			if runtime.GOOS != "windows" {
				assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())
			}
			// No address, nor its local part, nor the base URL, in clear.
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			for _, e := range entries[:min(n, 3000)] {
				local := e.Email[:strings.IndexByte(e.Email, '@')]
				require.False(t, bytes.Contains(raw, []byte(e.Email)), "address %s in clear", e.Email)
				if len(local) >= 8 { // a shorter one could turn up in 1 MB of random bytes
					require.False(t, bytes.Contains(raw, []byte(local)), "local part %s in clear", local)
				}
			}
			assert.False(t, bytes.Contains(raw, []byte("example.com")))
			names, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
			require.NoError(t, err)
			assert.Equal(t, []string{path}, names, "no temporary file left behind")
		})
	}
}

// TestStateFileRefusesDamage: a state cut short anywhere, with a byte changed anywhere but
// the in-use mark, or opened with another key does not read.
func TestStateFileRefusesDamage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state")
	writeTestState(t, path, testStateKey, stateHeader{ListID: 1}, testEntries(10000, 7))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(raw), 2*stateChunk, "more than one chunk")

	_, _, err = readAllState(bytes.NewReader(raw), "another-key")
	require.ErrorIs(t, err, errStateOtherAccount)

	// The reader runs on one goroutine: under -race, fewer random cuts and flips (each a
	// read of the whole file) check as much.
	trials := 40
	if raceEnabled {
		trials = 8
	}
	rng := rand.New(rand.NewPCG(1, 2))
	cuts := []int{0, 10, statePrefixLen, statePrefixLen + 4, statePrefixLen + 4 + stateChunk + 16, len(raw) - 17, len(raw) - 1}
	for range trials {
		cuts = append(cuts, rng.IntN(len(raw)))
	}
	for _, cut := range cuts {
		_, _, err := readAllState(bytes.NewReader(raw[:cut]), testStateKey)
		require.Error(t, err, "cut at %d of %d", cut, len(raw))
	}
	_, _, err = readAllState(bytes.NewReader(append(slicesClone(raw), 0)), testStateKey)
	require.Error(t, err, "a byte appended")
	for range trials {
		i := rng.IntN(len(raw))
		if i == stateMarkOffset || (i > stateMarkOffset && i < stateKeyIDOff) {
			continue // the in-use mark and the reserved bytes are not sealed
		}
		b := slicesClone(raw)
		b[i] ^= byte(1 + rng.IntN(255))
		_, _, err := readAllState(bytes.NewReader(b), testStateKey)
		require.Error(t, err, "byte %d changed", i)
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func TestStateInUseMark(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state")
	require.NoError(t, markStateInUse(path, true), "no state: nothing to mark")
	writeTestState(t, path, testStateKey, stateHeader{ListID: 1}, testEntries(5, 1))
	r, err := readStateFile(path, keysOf(t, testStateKey))
	require.NoError(t, err)
	assert.False(t, r.inUse)
	r.close()
	require.NoError(t, markStateInUse(path, true))
	r, err = readStateFile(path, keysOf(t, testStateKey))
	require.NoError(t, err)
	assert.True(t, r.inUse)
	r.close()
}

func TestStateLock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state")
	unlock, err := lockState(path)
	require.NoError(t, err)
	_, err = lockState(path)
	require.ErrorIs(t, err, errStateLocked)
	unlock()
	unlock, err = lockState(path)
	require.NoError(t, err)
	unlock()
}

// FuzzReadState: the reader of a state never panics nor reads beyond its bounds, whatever
// the bytes; those that are no state under the key are refused.
func FuzzReadState(f *testing.F) {
	dir := f.TempDir()
	for i, n := range []int{0, 2, 200} {
		path := filepath.Join(dir, fmt.Sprint(i))
		writeTestState(f, path, testStateKey, stateHeader{BaseURL: "u", ListID: 3}, testEntries(n, uint64(i)))
		raw, err := os.ReadFile(path)
		require.NoError(f, err)
		f.Add(raw)
		f.Add(raw[:len(raw)/2])
	}
	// Format 2: owners and the activity chart's base.
	path := filepath.Join(dir, "v2")
	entries := testEntries(20, 9)
	for i := range entries {
		entries[i].Owned = i%2 == 0
	}
	writeTestState(f, path, testStateKey, stateHeader{BaseURL: "u", ListID: 3, Owners: true,
		Activity: activityBase{From: "2026-11-30", Subs: 12, Unsubs: 3}}, entries)
	raw, err := os.ReadFile(path)
	require.NoError(f, err)
	f.Add(raw)
	f.Add(raw[:len(raw)-9])
	f.Add([]byte(stateMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, entries, err := readAllState(bytes.NewReader(b), testStateKey)
		if err == nil {
			for _, e := range entries {
				require.LessOrEqual(t, len(e.Email), maxStateString)
			}
		}
	})
}

// BenchmarkStateSize writes a state of b.N plausible members and reports its size per
// member: `go test ./listsync -run - -bench StateSize -benchtime 1000000x`.
func BenchmarkStateSize(b *testing.B) {
	path := filepath.Join(b.TempDir(), "state")
	rng := rand.New(rand.NewPCG(3, 4))
	w, err := createState(path, keysOf(b, testStateKey), stateHeader{BaseURL: "https://app.sendloop.com/api/v3", ListID: 1})
	require.NoError(b, err)
	b.ResetTimer()
	for i := range b.N {
		e := stateEntry{ID: 1_000_000 + i, Email: fakeAddress(rng, i), Status: statusSubscribed, Values: rng.Uint64()}
		if i%20 == 0 {
			e.Status = statusUnsubscribed
		}
		if err := w.add(e); err != nil {
			b.Fatal(err)
		}
	}
	require.NoError(b, w.commit())
	b.StopTimer()
	info, err := os.Stat(path)
	require.NoError(b, err)
	b.ReportMetric(float64(info.Size())/float64(b.N), "B/member")
	f, err := os.Open(path)
	require.NoError(b, err)
	defer f.Close()
	start := time.Now()
	r, err := readState(f, keysOf(b, testStateKey))
	require.NoError(b, err)
	n := 0
	for {
		_, err := r.next()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(b, err)
		n++
	}
	require.Equal(b, b.N, n)
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "read-ns/member")
}

// TestStateFormatTwoRoundTrips: a state of format 2 reads back with its owners and its
// activity base; one of format 1 (0.4.0's) reads with neither, whatever its entries'
// owner bits.
func TestStateFormatTwoRoundTrips(t *testing.T) {
	t.Parallel()
	entries := []stateEntry{
		{ID: 1, Email: "a@example.com", Status: statusSubscribed, Values: 1, Owned: true},
		{ID: 2, Email: "b@example.com", Status: statusUnsubscribed, Values: 2},
		{ID: 3, Email: "c@example.com", Status: "Bounced", Values: 3, Owned: true, Unknown: true},
	}
	tests := []struct {
		name   string
		header stateHeader
		want   []stateEntry
	}{
		{name: "format 2", header: stateHeader{BaseURL: "u", ListID: 3, Owners: true, LastFull: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC),
			Activity: activityBase{From: "2026-11-30", Subs: 12, Unsubs: 3}}, want: entries},
		{name: "format 1", header: stateHeader{BaseURL: "u", ListID: 3, LastFull: time.Date(2026, 11, 30, 2, 0, 0, 0, time.UTC)}, want: []stateEntry{
			{ID: 1, Email: "a@example.com", Status: statusSubscribed, Values: 1},
			{ID: 2, Email: "b@example.com", Status: statusUnsubscribed, Values: 2},
			{ID: 3, Email: "c@example.com", Status: "Bounced", Values: 3, Unknown: true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "state")
			writeTestState(t, path, testStateKey, tt.header, entries)
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			h, got, err := readAllState(f, testStateKey)
			require.NoError(t, err)
			assert.Equal(t, tt.header, h.withUTC())
			assert.Equal(t, tt.want, got)
		})
	}
}
