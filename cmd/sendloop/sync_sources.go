package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/go-sendloop/sendloop/listsync"
	"github.com/go-sendloop/sendloop/listsync/jsonlsource"
	"github.com/go-sendloop/sendloop/listsync/pgsource"
)

// sourceURLVariable names the environment variable holding the address of the database
// --query reads: never a flag, whose value shows in ps and in CI logs.
const sourceURLVariable = "SENDLOOP_SOURCE_URL"

// syncSources holds the flags of sync's sources other than --csv.
type syncSources struct {
	query     string
	jsonlPath string
}

// sourceFlags adds --query and --jsonl.
func (o *syncOptions) sourceFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.query, "query", "", "read the rows from the PostgreSQL query `SQL` (the database's address in "+sourceURLVariable+"), instead of --csv")
	fs.StringVar(&o.jsonlPath, "jsonl", "", "read the rows from the JSON Lines `FILE` (one object per line), instead of --csv")
}

// hasSource reports whether a source flag was given.
func (o *syncOptions) hasSource() bool {
	return o.csvPath != "" || o.query != "" || o.jsonlPath != ""
}

// syncSource is the source a sync reads, whichever flag names it: a listsync.Source, and
// what the CLI's reports need of it.
type syncSource struct {
	listsync.Source
	// Path is the name the reports give the source: the file's path, or "the query".
	Path string
	// Size is the progress line's total: the file's bytes, or its rows (0: unknown).
	Size int64

	csv   *listsync.CSVFile
	jsonl *jsonlsource.File
	query *pgsource.Query
}

// openSyncSource checks the source flags and opens the source they name: the file's
// header or keys read, the query's columns asked for. info is the file's (nil for a
// query), for the outputs that must not overwrite it. For --query and --jsonl, o.csvPath
// becomes the source's name, which the reports show.
func openSyncSource(ctx context.Context, a *app, o *syncOptions) (src *syncSource, info os.FileInfo, err error) {
	n := 0
	for _, given := range []bool{o.csvPath != "", o.query != "", o.jsonlPath != ""} {
		if given {
			n++
		}
	}
	if n > 1 {
		return nil, nil, usagef("sync", "give one source: --csv FILE, --jsonl FILE or --query SQL")
	}
	if (o.query != "" || o.jsonlPath != "") && (o.delimiter != "" || o.encoding != "") {
		return nil, nil, usagef("sync", "--encoding and --delimiter are for --csv")
	}
	header := o.header
	switch {
	case o.query != "":
		url := a.env.getenv(sourceURLVariable)
		if strings.TrimSpace(url) == "" {
			return nil, nil, usagef("sync", "--query needs the database's address in %s (a postgres:// URL); it is never a flag", sourceURLVariable)
		}
		q, err := pgsource.New(url, o.query, pgsource.Options{Header: header})
		if err != nil {
			return nil, nil, usagef("sync", "--query: %v", err)
		}
		s, err := q.Source(ctx)
		var cerr *pgsource.ColumnsError
		switch {
		case errors.As(err, &cerr):
			q.Close()
			return nil, nil, inputf("--query: %v", err)
		case err != nil:
			q.Close()
			return nil, nil, fmt.Errorf("--query: %w", err)
		}
		o.csvPath = "the query"
		return &syncSource{Source: s, Path: o.csvPath, query: q}, nil, nil
	case o.jsonlPath != "":
		if o.jsonlPath == "-" {
			return nil, nil, usagef("sync", "--jsonl needs a file: sync reads it more than once, so it cannot read stdin")
		}
		info, err := os.Stat(o.jsonlPath)
		if err != nil {
			return nil, nil, inputf("--jsonl: %v", err)
		}
		f := jsonlsource.New(o.jsonlPath, jsonlsource.Options{Header: header})
		s, err := f.Source(ctx)
		if err != nil {
			return nil, nil, inputf("%s: %v", o.jsonlPath, err)
		}
		rows, _ := f.Lines()
		o.csvPath = o.jsonlPath
		return &syncSource{Source: s, Path: o.jsonlPath, Size: int64(rows), jsonl: f}, info, nil
	}
	if o.csvPath == "-" {
		return nil, nil, usagef("sync", "--csv needs a file: sync reads it more than once, so it cannot read stdin")
	}
	info, err = os.Stat(o.csvPath)
	if err != nil {
		return nil, nil, inputf("--csv: %v", err)
	}
	f, err := listsync.OpenCSV(o.csvPath, listsync.CSVOptions{Read: o.read, Header: o.header})
	if err != nil {
		return nil, nil, inputf("%s: %v", o.csvPath, err)
	}
	return &syncSource{Source: f, Path: f.Path, Size: info.Size(), csv: f}, info, nil
}

// Close releases the query's connection and spill file.
func (s *syncSource) Close() {
	if s.query != nil {
		s.query.Close()
	}
}

// CountRecords counts the source's rows without reading them through the plan: those a
// sync stopped while planning left (0 for a query not read to its end).
func (s *syncSource) CountRecords() (int, error) {
	switch {
	case s.csv != nil:
		return s.csv.CountRecords()
	case s.jsonl != nil:
		rows, _ := s.jsonl.Lines()
		return rows, nil
	}
	return s.query.Rows(), nil
}

// describe says how the source is read, for the notes.
func (s *syncSource) describe(m *listsync.Mapping) string {
	if s.csv != nil {
		return describeMapping(s.csv, m)
	}
	var cols []string
	email := -1
	var fields []string
	if s.jsonl != nil {
		cols = s.jsonl.Columns()
		email, fields, _ = s.jsonl.Layout()
	} else {
		cols = s.query.Columns()
		email, fields, _ = s.query.Layout()
	}
	var b strings.Builder
	b.WriteString(s.Path)
	if email >= 0 {
		fmt.Fprintf(&b, ": address in %q", cols[email])
	}
	// m's fields are in the source's order: the address first, then the fields.
	for _, f := range m.Fields {
		if i := f.Column - 1; i >= 0 && i < len(fields) {
			fmt.Fprintf(&b, "; %q is CustomField%d (%s)", fields[i], f.Field.ID, f.Field.Name)
		}
	}
	if len(m.Ignored) > 0 {
		fmt.Fprintf(&b, "; ignored: %s", strings.Join(m.Ignored, ", "))
	}
	return b.String()
}
