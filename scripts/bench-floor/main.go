// Command bench-floor makes the calls of a sync or an export with a bare net/http client,
// doing nothing else, and prints how long they took: the floor that the fake and the link
// set for any client on this machine, the baseline that scripts/bench-wan and
// scripts/bench-sync measure the CLI against in the same run. It reads SENDLOOP_BASE_URL and
// SENDLOOP_API_KEY, as the CLI does.
//
//	bench-floor import LIST-ID FILE CONCURRENCY BATCH
//
// list.get, the first page of members, then FILE's rows (EmailAddress and the list's custom
// fields by name, as the demo list and scripts' files have them) imported in batches of
// BATCH with CONCURRENCY calls in flight; the bodies are built before the clock starts.
//
//	bench-floor browse LIST-ID CONCURRENCY
//
// list.get, then the list's pages with CONCURRENCY in flight, up to the first short one;
// the answers are read and dropped.
//
// It prints one line: the calls made and the seconds they took.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sendloop/sendloop/internal/commands"
)

// pageSize is the members of a full subscriber.browse page.
const pageSize = 100

func main() {
	log.SetFlags(0)
	log.SetPrefix("bench-floor: ")
	if len(os.Args) < 2 {
		log.Fatal("usage: bench-floor import LIST-ID FILE CONCURRENCY BATCH | browse LIST-ID CONCURRENCY")
	}
	f := &floor{base: strings.TrimSuffix(os.Getenv("SENDLOOP_BASE_URL"), "/"), key: os.Getenv("SENDLOOP_API_KEY")}
	if f.base == "" || f.key == "" {
		log.Fatal("SENDLOOP_BASE_URL and SENDLOOP_API_KEY must be set")
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	f.hc = &http.Client{Transport: t}
	args := os.Args[2:]
	var err error
	switch {
	case os.Args[1] == "import" && len(args) == 4:
		err = f.importFile(args[0], args[1], atoi(args[2]), atoi(args[3]))
	case os.Args[1] == "browse" && len(args) == 2:
		err = f.browse(args[0], atoi(args[1]))
	default:
		log.Fatal("usage: bench-floor import LIST-ID FILE CONCURRENCY BATCH | browse LIST-ID CONCURRENCY")
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d calls in %.3f s\n", f.calls.Load(), f.elapsed.Seconds())
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		log.Fatalf("%q: want a positive number", s)
	}
	return n
}

type floor struct {
	base, key string
	hc        *http.Client
	calls     atomic.Int64
	elapsed   time.Duration
}

// post sends a command and reads its answer into buf, counting the call.
func (f *floor) post(command, body string, buf *bytes.Buffer) error {
	f.calls.Add(1)
	resp, err := f.hc.Post(f.base+"/api/v3/"+command+"/json", "application/x-www-form-urlencoded", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength))
	}
	_, err = buf.ReadFrom(resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || !bytes.HasPrefix(buf.Bytes(), []byte(`{"Success":true`))) {
		err = fmt.Errorf("%s: HTTP %d: %.200s", command, resp.StatusCode, buf.Bytes())
	}
	return err
}

func (f *floor) listGet(listID string) ([]byte, error) {
	var buf bytes.Buffer
	err := f.post(commands.ListGet, "APIKey="+url.QueryEscape(f.key)+"&ListID="+listID+"&GetCustomFields=1", &buf)
	return buf.Bytes(), err
}

// page reads a page of members into buf and returns how many it holds.
func (f *floor) page(listID string, index int, buf *bytes.Buffer) (int, error) {
	err := f.post(commands.SubscriberBrowse, "APIKey="+url.QueryEscape(f.key)+"&ListID="+listID+"&StartIndex="+strconv.Itoa(index), buf)
	return bytes.Count(buf.Bytes(), []byte(`"SubscriberID"`)), err
}

// importFile times list.get, the first page and the import of path's rows.
func (f *floor) importFile(listID, path string, concurrency, batch int) error {
	answer, err := f.listGet(listID)
	if err != nil {
		return err
	}
	bodies, err := f.importBodies(answer, listID, path, batch)
	if err != nil {
		return err
	}
	f.calls.Store(0)
	start := time.Now()
	if _, err := f.listGet(listID); err != nil {
		return err
	}
	if _, err := f.page(listID, 0, new(bytes.Buffer)); err != nil {
		return err
	}
	work := make(chan string)
	done := make(chan error, 1)
	go func() {
		done <- inParallel(concurrency, func(buf *bytes.Buffer) error {
			var first error
			for body := range work { // read to the end even after a failure: the sender waits
				if err := f.post(commands.SubscriberImport, body, buf); err != nil && first == nil {
					first = err
				}
			}
			return first
		})
	}()
	for _, body := range bodies {
		work <- body
	}
	close(work)
	err = <-done
	f.elapsed = time.Since(start)
	return err
}

// importBodies builds the import bodies of path's rows: the address column first, the
// other columns named as the list's custom fields in listAnswer.
func (f *floor) importBodies(listAnswer []byte, listID, path string, batch int) ([]string, error) {
	type field struct {
		CustomFieldID any // a number, or a numeric string as the service sends it
		FieldName     string
	}
	var list struct {
		CustomFields []field
		List         struct{ CustomFields []field }
	}
	dec := json.NewDecoder(bytes.NewReader(listAnswer))
	dec.UseNumber() // an ID of 1,000,000 prints as 1000000, not 1e+06
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("list.get: %w", err)
	}
	ids := map[string]string{}
	for _, cf := range append(list.CustomFields, list.List.CustomFields...) {
		ids[cf.FieldName] = fmt.Sprint(cf.CustomFieldID)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	if !sc.Scan() {
		return nil, errors.New(path + ": no header")
	}
	header := strings.Split(sc.Text(), ",")
	keys := []string{"EmailAddress"}
	for _, name := range header[1:] {
		id, ok := ids[name]
		if !ok {
			return nil, fmt.Errorf("%s: column %q is no custom field of list %s", path, name, listID)
		}
		keys = append(keys, "CustomField"+id)
	}
	var bodies []string
	var b strings.Builder
	n := 0
	for sc.Scan() {
		if n == 0 {
			b.WriteString("APIKey=" + url.QueryEscape(f.key) + "&ListID=" + listID)
		}
		values := strings.Split(sc.Text(), ",")
		if len(values) != len(keys) {
			return nil, fmt.Errorf("%s: %d fields where the header has %d (quoted fields are not read)", path, len(values), len(keys))
		}
		for i, v := range values {
			b.WriteString("&" + url.QueryEscape("Subscribers["+strconv.Itoa(n)+"]["+keys[i]+"]") + "=" + url.QueryEscape(v))
		}
		if n++; n == batch {
			bodies, n = append(bodies, b.String()), 0
			b.Reset()
		}
	}
	if n > 0 {
		bodies = append(bodies, b.String())
	}
	return bodies, sc.Err()
}

// browse times list.get and the walk of the list's pages.
func (f *floor) browse(listID string, concurrency int) error {
	f.calls.Store(0)
	start := time.Now()
	if _, err := f.listGet(listID); err != nil {
		return err
	}
	var next, end atomic.Int64 // the next page to ask for; the first short page, once seen
	end.Store(1 << 62)
	var stop atomic.Bool
	err := inParallel(concurrency, func(buf *bytes.Buffer) error {
		for {
			index := next.Add(1) - 1
			if index > end.Load() || stop.Load() {
				return nil
			}
			members, err := f.page(listID, int(index), buf)
			if err != nil {
				stop.Store(true)
				return err
			}
			if members < pageSize {
				for cur := end.Load(); index < cur && !end.CompareAndSwap(cur, index); cur = end.Load() {
				}
			}
		}
	})
	f.elapsed = time.Since(start)
	return err
}

// inParallel runs work on n goroutines, each with a buffer of its own, and returns the first
// error one of them returned once all have.
func inParallel(n int, work func(buf *bytes.Buffer) error) error {
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf bytes.Buffer
			if err := work(&buf); err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		}()
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return *err
	}
	return nil
}
