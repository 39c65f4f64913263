package listsync

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/csvfile"
)

// importAnswerer answers every subscriber.import with its row count, sending nothing: the
// client's work alone.
type importAnswerer struct{}

func (importAnswerer) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	rows := bytes.Count(body, []byte("%5D%5BEmailAddress%5D="))
	answer := `{"Success":true,"TotalImported":` + strconv.Itoa(rows) + `,"TotalDuplicate":0,"TotalFailed":0}`
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		ContentLength: int64(len(answer)), Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
}

// importRowPerMap is importRow as it was: a new map for each row, the baseline of
// BenchmarkImportRows.
func importRowPerMap(m *Mapping, row MappedRow) sendloop.ImportSubscriber {
	sub := sendloop.ImportSubscriber{EmailAddress: row.Email}
	for i, f := range m.Fields {
		if row.Values[i] == "" {
			continue
		}
		if sub.Fields == nil {
			sub.Fields = sendloop.CustomFields{}
		}
		sub.Fields[f.Field.ID] = row.Values[i]
	}
	return sub
}

// BenchmarkImportRows imports 20,000 mapped rows with two custom fields through ImportAll,
// against a transport that answers without a server: the rows made by importRow (one map
// for all) against a map per row (the baseline).
func BenchmarkImportRows(b *testing.B) {
	const n = 20_000
	m, err := mapHeader([]string{"EmailAddress", "First name", "Plan"}, []Field{{ID: 1, Name: "First name"}, {ID: 2, Name: "Plan"}})
	if err != nil {
		b.Fatal(err)
	}
	rows := make([]MappedRow, n)
	for i := range rows {
		rows[i] = m.Row(csvfile.Record{Fields: []string{fmt.Sprintf("user%07d@example.com", i), "User " + strconv.Itoa(i), "pro"}, Line: i + 2})
		if rows[i].Reject != "" {
			b.Fatal(rows[i].Reject)
		}
	}
	c, err := sendloop.NewClient("bench-key-0123456789", sendloop.WithBaseURL("https://bench.invalid"),
		sendloop.WithHTTPClient(&http.Client{Transport: importAnswerer{}}))
	if err != nil {
		b.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		make func() func(MappedRow) sendloop.ImportSubscriber
	}{
		{"shared-map", func() func(MappedRow) sendloop.ImportSubscriber {
			var fields sendloop.CustomFields
			return func(r MappedRow) sendloop.ImportSubscriber { return importRow(m, r, &fields) }
		}},
		{"map-per-row", func() func(MappedRow) sendloop.ImportSubscriber {
			return func(r MappedRow) sendloop.ImportSubscriber { return importRowPerMap(m, r) }
		}},
	} {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime(b)
			for range b.N {
				row := tt.make()
				seq := func(yield func(sendloop.ImportSubscriber) bool) {
					for _, r := range rows {
						if !yield(row(r)) {
							return
						}
					}
				}
				report, err := c.Subscribers.ImportAll(context.Background(), 1, seq, sendloop.ImportOptions{})
				if err != nil || report.Imported != n {
					b.Fatal(err, report)
				}
			}
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N)/n, "cpu-ns/row")
		})
	}
}
