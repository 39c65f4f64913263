package listsync

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seqRows yields rows.
func seqRows(rows []Row) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

// TestWriteCSV: the plan file of every kind of row, against the demo list (ann pro, bob
// free, gone free; First name is field 1, Plan field 2).
func TestWriteCSV(t *testing.T) {
	t.Parallel()
	const header = "action,line,email,subscriber_id,field,field_id,from,to,reason\n"
	row := func(email, first, plan string) Row {
		return Row{Email: email, Fields: map[string]string{"First name": first, "Plan": plan}}
	}
	tests := []struct {
		name        string
		rows        []Row
		unsubscribe bool
		want        string
	}{
		{
			name: "nothing to change",
			rows: []Row{row("ann@example.com", "", "pro"), row("bob@example.com", "", "free"), row("gone@example.com", "", "free")},
			want: header,
		},
		{
			name: "additions: a row per field set, one without a field when none is",
			rows: []Row{row("ann@example.com", "", "pro"), row("New@Example.com", "Nat", "team"), row("bare@example.com", "", "")},
			want: header +
				"add,2,New@Example.com,,First name,1,,Nat,\n" +
				"add,2,New@Example.com,,Plan,2,,team,\n" +
				"add,3,bare@example.com,,,,,,\n",
		},
		{
			name: "an update: a row per field changed, the address as the list holds it",
			rows: []Row{row("ANN@example.com", "Ann", "gold"), row("bob@example.com", "", "free")},
			want: header +
				"update,1,ann@example.com,1,First name,1,,Ann,\n" +
				"update,1,ann@example.com,1,Plan,2,pro,gold,\n",
		},
		{
			name:        "unsubscriptions after the rows",
			rows:        []Row{row("new@example.com", "", "free"), row("bob@example.com", "", "free")},
			unsubscribe: true,
			want: header +
				"add,1,new@example.com,,Plan,2,,free,\n" +
				"unsubscribe,,ann@example.com,1,,,,,\n" +
				"unsubscribe,,gone@example.com,3,,,,,\n",
		},
		{
			name: "rejects with their reasons, in the source's order",
			rows: []Row{
				row("not an address", "", "free"),
				row("bob@example.com", "", "team"),
				row("BOB@example.com", "", "pro"),
				{Email: "x@example.com", Fields: map[string]string{"Colour": "red"}},
				row("", "", ""),
			},
			want: header +
				"reject,1,not an address,,,,,,invalid email address\n" +
				"update,2,bob@example.com,2,Plan,2,free,team,\n" +
				"reject,3,BOB@example.com,,,,,,duplicate of line 2\n" +
				"reject,4,x@example.com,,,,,,\"unknown field \"\"Colour\"\" (the source's fields are \"\"First name\"\", \"\"Plan\"\")\"\n" +
				"reject,5,,,,,,,missing email address\n",
		},
		{
			name: "values quoted as RFC 4180 says, line breaks kept",
			rows: []Row{row("new@example.com", "Zoë, the \"best\"", "a\r\nb\rc\nd"), row("line@example.com", "=1+1", "")},
			want: header +
				"add,1,new@example.com,,First name,1,,\"Zoë, the \"\"best\"\"\",\n" +
				"add,1,new@example.com,,Plan,2,,\"a\r\nb\rc\nd\",\n" +
				"add,2,line@example.com,,First name,1,,=1+1,\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := demoList(t)
			src := RowFunc([]string{"First name", "Plan"}, func(context.Context) iter.Seq2[Row, error] { return seqRows(tt.rows) })
			pl := planRows(t, c, src, Options{UnsubscribeMissing: tt.unsubscribe})
			var b bytes.Buffer
			require.NoError(t, pl.WriteCSV(testContext(t), &b))
			assert.Equal(t, tt.want, b.String())
			// The file reads back as CSV, every record of the same length.
			recs, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
			require.NoError(t, err)
			assert.Equal(t, planCSVHeader, recs[0])
		})
	}
}

// TestWriteCSVFails: a source that changed since the plan, a context ended and a writer
// that fails each end WriteCSV with an error.
func TestWriteCSVFails(t *testing.T) {
	t.Parallel()
	// changing is a source whose readings after the first yield second.
	changing := func(first, second []Row) Source {
		var reads atomic.Int32
		return RowFunc([]string{"Plan"}, func(context.Context) iter.Seq2[Row, error] {
			if reads.Add(1) > 1 {
				return seqRows(second)
			}
			return seqRows(first)
		})
	}
	newRow := Row{Email: "new@example.com", Fields: map[string]string{"Plan": "free"}}
	annRow := Row{Email: "ann@example.com", Fields: map[string]string{"Plan": "gold"}}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		src  func(t *testing.T) Source
		// change, when set, runs between the plan and WriteCSV.
		change func(t *testing.T, src Source)
		ctx    context.Context
		w      io.Writer // a bytes.Buffer when nil
		want   string
		is     error
	}{
		{
			name: "a row moved",
			src:  func(*testing.T) Source { return changing([]Row{newRow, annRow}, []Row{annRow, newRow}) },
			want: "listsync: the source changed since the plan: line 1 no longer holds what was planned for it; plan again",
		},
		{
			name: "a row gone",
			src:  func(*testing.T) Source { return changing([]Row{annRow, newRow}, []Row{annRow}) },
			want: "listsync: the source changed since the plan: line 2 no longer holds what was planned for it; plan again",
		},
		{
			name: "a rejected row fixed",
			src: func(*testing.T) Source {
				return changing([]Row{{Email: "bad"}, newRow}, []Row{{Email: "fixed@example.com"}, newRow})
			},
			want: "listsync: the source changed since the plan: line 1 no longer holds what was planned for it; plan again",
		},
		{
			name: "a CSV file rewritten",
			src: func(t *testing.T) Source {
				path := filepath.Join(t.TempDir(), "m.csv")
				require.NoError(t, os.WriteFile(path, []byte("EmailAddress,Plan\nnew@example.com,free\n"), 0o644))
				src, err := OpenCSV(path, CSVOptions{})
				require.NoError(t, err)
				return src
			},
			change: func(t *testing.T, src Source) {
				// Longer: the size tells the change even where timestamps are coarse.
				path := src.(*CSVFile).Path
				require.NoError(t, os.WriteFile(path, []byte("EmailAddress,Plan\nnew@example.com,team\nzed@example.com,pro\n"), 0o644))
			},
			want: "changed during the sync (its size or modification time differs)",
		},
		{
			name: "a context ended",
			src:  func(*testing.T) Source { return Rows([]Row{newRow}) },
			ctx:  cancelled,
			is:   context.Canceled,
		},
		{
			name: "a writer that fails",
			src:  func(*testing.T) Source { return Rows([]Row{newRow}) },
			w:    failingWriter{},
			is:   errDiskFull,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, c := demoList(t)
			src := tt.src(t)
			pl := planRows(t, c, src, Options{})
			if tt.change != nil {
				tt.change(t, src)
			}
			ctx := tt.ctx
			if ctx == nil {
				ctx = testContext(t)
			}
			w := tt.w
			if w == nil {
				w = &bytes.Buffer{}
			}
			err := pl.WriteCSV(ctx, w)
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

// TestWriteCSVContextEndsWhileWriting: a context that ends after the first row stops the
// writing there, with the context's cause.
func TestWriteCSVContextEndsWhileWriting(t *testing.T) {
	t.Parallel()
	_, c := demoList(t)
	rows := []Row{{Email: "new1@example.com"}, {Email: "new2@example.com"}, {Email: "new3@example.com"}}
	ctx, cancel := context.WithCancelCause(testContext(t))
	stop := errors.New("stopped by the test")
	var reads atomic.Int32
	src := RowFunc(nil, func(context.Context) iter.Seq2[Row, error] {
		second := reads.Add(1) > 1
		return func(yield func(Row, error) bool) {
			for i, r := range rows {
				if second && i == 1 {
					cancel(stop) // as the second row is read again
				}
				if !yield(r, nil) {
					return
				}
			}
		}
	})
	pl := planRows(t, c, src, Options{})
	var b bytes.Buffer
	err := pl.WriteCSV(ctx, &b)
	require.ErrorIs(t, err, stop)
	assert.Equal(t, "action,line,email,subscriber_id,field,field_id,from,to,reason\nadd,1,new1@example.com,,,,,,\n", b.String())
}

var errDiskFull = errors.New("disk full")

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }
