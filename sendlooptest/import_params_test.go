package sendlooptest

import (
	"maps"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// refRow is an import row as the fake read it before parseParams: from the whole form.
type refRow struct {
	email    string
	fields   map[int]string
	badField bool
}

// refImportRows is the earlier reading of Subscribers[<n>][<key>] from a parsed form,
// kept as the reference parseParams must agree with.
func refImportRows(form map[string][]string) []refRow {
	byIndex := map[int]*refRow{}
	for key, v := range form {
		rest, found := strings.CutPrefix(key, "Subscribers[")
		if !found {
			continue
		}
		idx, field, found := strings.Cut(rest, "][")
		n, err := strconv.Atoi(idx)
		if !found || err != nil || !strings.HasSuffix(field, "]") {
			continue
		}
		row := byIndex[n]
		if row == nil {
			row = &refRow{fields: map[int]string{}}
			byIndex[n] = row
		}
		switch field = field[:len(field)-1]; {
		case field == "EmailAddress":
			row.email = v[0]
		case strings.HasPrefix(field, "CustomField"):
			id, err := strconv.ParseInt(field[len("CustomField"):], 10, 32)
			if err != nil || id < 0 {
				row.badField = true
				continue
			}
			row.fields[int(id)] = v[0]
		default:
			row.badField = true
		}
	}
	keys := make([]int, 0, len(byIndex))
	for n := range byIndex {
		keys = append(keys, n)
	}
	sort.Ints(keys)
	rows := make([]refRow, len(keys))
	for i, n := range keys {
		r := byIndex[n]
		r.email = strings.TrimSpace(r.email)
		if r.badField {
			*r = refRow{badField: true}
		}
		rows[i] = *r
	}
	return rows
}

// importedRows reads rows as subscriberImport does.
func importedRows(form map[string][]string, rows *importParams) []refRow {
	c := &call{form: form, rows: rows}
	var out []refRow
	all := c.importRows()
	defer all.release()
	for row := range all.all() {
		_, email, packed, bad := row.read(nil)
		if bad {
			out = append(out, refRow{badField: true})
			continue
		}
		fields := map[int]string{}
		for id, v := range packed.all() {
			fields[id] = v
		}
		out = append(out, refRow{email: email, fields: fields})
	}
	return out
}

// checkParams compares parseParams with parseForm and the earlier row reading.
func checkParams(t *testing.T, body string) {
	t.Helper()
	whole := parseForm([]byte(body))
	form, rows := parseParams([]byte(body))
	rest := maps.Clone(whole)
	for k := range rest {
		if strings.HasPrefix(k, "Subscribers[") {
			delete(rest, k)
		}
	}
	for k := range form {
		if strings.HasPrefix(k, "Subscribers[") {
			rest[k] = whole[k] // a row key that is no row's stays in the form
		}
	}
	assert.Equal(t, rest, form, "form of %q", body)
	want := refImportRows(whole)
	got := importedRows(form, rows)
	if len(want) == 0 && len(got) == 0 {
		return
	}
	assert.Equal(t, want, got, "rows of %q", body)
}

func TestParseParamsReadsImportRows(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		"",
		"APIKey=k&ListID=1&Subscribers%5B0%5D%5BEmailAddress%5D=a%40b.c&Subscribers%5B0%5D%5BCustomField2%5D=x+y&Subscribers%5B1%5D%5BEmailAddress%5D=b%40b.c",
		"Subscribers[1][EmailAddress]=b@b.c&Subscribers[0][EmailAddress]=a@b.c&Subscribers[0][CustomField1]=%C3%BC",
		"Subscribers%5b10%5d%5bEmailAddress%5d=j%40b.c&Subscribers%5B2%5D%5BEmailAddress%5D=+c%40b.c+",
		"Subscribers%5B0%5D%5BName%5D=x&Subscribers%5B0%5D%5BEmailAddress%5D=a%40b.c",
		"Subscribers%5B0%5D%5BCustomField-1%5D=x&Subscribers%5B1%5D%5BCustomFieldx%5D=y",
		"Subscribers%5B0%5D%5BEmailAddress%5D=a%40b.c&Subscribers%5B0%5D%5BEmailAddress%5D=b%40b.c",
		"Subscribers%5B0%5D%5BCustomField1%5D=1&Subscribers%5B0%5D%5BCustomField1%5D=2",
		"Subscribers%5B0%5D%5BEmailAddress%5D=%zz&Subscribers%5B1%5D%5BEmailAddress%5D=ok%40b.c",
		"Subscribers%5B%2B1%5D%5BEmailAddress%5D=plus%40b.c&Subscribers%5B-1%5D%5BEmailAddress%5D=minus%40b.c",
		"Subscribers%5B99999999999%5D%5BEmailAddress%5D=big%40b.c&Subscribers[]=x&Subscribers=y",
		"Subscribers%5B0%5D%5BCustomField-0%5D=x&Subscribers%5B0%5D%5BEmailAddress%5D=a%40b.c&Subscribers%5B1%5D%5BCustomField%2B3%5D=y",
		"Subscribers%5B0%5D%5BCustomField2147483648%5D=x&Subscribers%5B1%5D%5BCustomField2147483647%5D=y",
	} {
		checkParams(t, body)
	}
}

// FuzzParseParams checks parseParams against parseForm and the earlier reading of import
// rows on any body (semicolons aside, as in FuzzParseForm).
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{
		"Subscribers%5B0%5D%5BEmailAddress%5D=a%40b.c&Subscribers%5B0%5D%5BCustomField2%5D=x",
		"Subscribers[3][CustomField1]=a&Subscribers[1][EmailAddress]=%20b%40c.d&ListID=1",
		"Subscribers%5B0%5D%5BX%5D=1&a=%zz",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		if strings.Contains(body, ";") {
			return
		}
		checkParams(t, body)
	})
}
