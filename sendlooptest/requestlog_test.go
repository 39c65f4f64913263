package sendlooptest

import (
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"testing"
)

func TestRequestLogBoundAndHook(t *testing.T) {
	t.Parallel()
	for _, size := range []int{-1, 0, 1, 3, 10} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string
			srv := NewServer(t, WithRequestLog(size), WithRequestHook(func(r Request) {
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, r.Command+" "+r.Form.Get("ListID"))
			}))
			const n = 7
			for i := 1; i <= n; i++ {
				resp, err := srv.hs.Client().PostForm(srv.URL+"/api/v3/list.get/json", url.Values{"APIKey": {srv.APIKey}, "ListID": {strconv.Itoa(i)}})
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			mu.Lock()
			if len(seen) != n || seen[0] != "list.get 1" || seen[n-1] != "list.get 7" {
				t.Errorf("the hook saw %q", seen)
			}
			mu.Unlock()
			want := n
			if size >= 0 {
				want = min(size, n)
			}
			reqs := srv.Requests()
			if len(reqs) != want {
				t.Fatalf("the log holds %d requests, want %d", len(reqs), want)
			}
			for i, r := range reqs {
				if got, want := r.Form.Get("ListID"), strconv.Itoa(n-want+i+1); got != want {
					t.Errorf("request %d has ListID %s, want %s", i, got, want)
				}
			}
			last := srv.LastRequest()
			if want > 0 && last.Form.Get("ListID") != "7" || want == 0 && last.Command != "" {
				t.Errorf("LastRequest = %s %v", last.Command, last.Form)
			}
		})
	}
}
