package sendqueue_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/internal/testkit/pgtest"
	"github.com/go-sendloop/sendloop/mailmerge"
	"github.com/go-sendloop/sendloop/mailmerge/sendqueue"
	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

const relayUser, relayPassword = "relay-user", "relay-password-q7x2"

// The helper process's settings: a worker run by TestMain in a child of the test binary,
// so that a test can kill it with SIGKILL mid-chunk.
const (
	envHelper   = "SENDQUEUE_TEST_WORKER"
	envDB       = "SENDQUEUE_TEST_WORKER_DB"
	envRelay    = "SENDQUEUE_TEST_WORKER_RELAY"
	envRelayCA  = "SENDQUEUE_TEST_WORKER_CA"
	envReadyDir = "SENDQUEUE_TEST_WORKER_READY"
)

func TestMain(m *testing.M) {
	// A rescue in seconds: chunks take rows for 1 s, time out after 2 s, are rescued after
	// 3 s, and wait 200 ms after a slowdown.
	sendqueue.SetTiming(time.Second, 2*time.Second, 3*time.Second, 200*time.Millisecond)
	// The service's API, which enqueues and chunks read who may be mailed through: nothing
	// suppressed, so the tests' rows are all sent.
	srv, err := sendlooptest.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testSrv = srv
	if testAPI, err = sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 0
	if os.Getenv(envHelper) == "1" {
		code = helperWorker()
	} else {
		code = m.Run()
	}
	srv.Close()
	os.Exit(code)
}

// testAPI is a client of the fake's API, testSrv, made by TestMain.
var (
	testAPI *sendloop.Client
	testSrv *sendlooptest.Server
)

// helperWorker runs a worker until it is killed.
func helperWorker() int {
	ctx := context.Background()
	db, err := pgxpool.New(ctx, os.Getenv(envDB))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pem, err := os.ReadFile(os.Getenv(envRelayCA))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	relay, err := smtp.NewRelay(os.Getenv(envRelay), smtp.Auth{Username: relayUser, Password: relayPassword},
		smtp.WithTLSConfig(&tls.Config{RootCAs: pool}), smtp.WithMaxConnections(2))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	w := sendqueue.NewWorker(db, relay, sendqueue.WorkerOptions{API: testAPI})
	err = sendqueue.Run(ctx, db, w, sendqueue.RunOptions{Started: func(string) {
		_ = os.WriteFile(filepath.Join(os.Getenv(envReadyDir), "ready"), nil, 0o600)
	}})
	fmt.Fprintln(os.Stderr, err)
	return 1
}

func pool(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	u := pgtest.URL(t)
	p, err := pgxpool.New(context.Background(), u)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p, u
}

func relay(t *testing.T, opts ...sendlooptest.RelayOption) (*sendlooptest.Relay, func(conns int) *smtp.Relay) {
	t.Helper()
	fake, err := sendlooptest.StartRelay(t, relayUser, relayPassword, opts...)
	require.NoError(t, err)
	return fake, func(conns int) *smtp.Relay {
		c, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: relayUser, Password: relayPassword},
			smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithDialTimeout(5*time.Second), smtp.WithMaxConnections(conns))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
}

var template = smtp.Message{From: "news@example.com", Subject: "News for {{{first}}}", Text: "Hello {{{first}}}",
	ListUnsubscribe: []string{"https://example.com/u?e={{email}}"}, ListUnsubscribeOneClick: true}

func source(n int) mailmerge.Source {
	rows := make([]mailmerge.Row, n)
	for i := range rows {
		addr := fmt.Sprintf("r%05d@example.net", i)
		rows[i] = mailmerge.Row{Line: i + 2, Address: addr, Values: map[string]string{"email": addr, "first": fmt.Sprintf("R%d", i)}}
	}
	return mailmerge.Rows([]string{"email", "first"}, rows)
}

func newSend(journal string, n, chunk int) sendqueue.Send {
	return sendqueue.Send{Journal: journal, Template: &template, Source: source(n), ChunkSize: chunk,
		Options: mailmerge.Options{API: testAPI}}
}

// runWorker runs a worker in this process until the test ends.
func runWorker(t *testing.T, db *pgxpool.Pool, r *smtp.Relay) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := sendqueue.NewWorker(db, r, sendqueue.WorkerOptions{API: testAPI})
	done := make(chan error, 1)
	go func() { done <- sendqueue.Run(ctx, db, w, sendqueue.RunOptions{}) }()
	t.Cleanup(func() {
		cancel()
		assert.NoError(t, <-done)
		assert.NoError(t, w.Close())
	})
}

// waitFinished reads the send's status until every chunk is done, checking at each read
// that the fates add up to the rows.
func waitFinished(t *testing.T, db *pgxpool.Pool, id string, within time.Duration) *sendqueue.Status {
	t.Helper()
	var last *sendqueue.Status
	require.Eventually(t, func() bool {
		st, err := sendqueue.ReadStatus(context.Background(), db, id, sendqueue.Config{})
		if !assert.NoError(t, err) {
			return true
		}
		sum := 0
		for _, n := range st.Fates {
			sum += n
		}
		assert.Equal(t, st.Rows, sum, "fates %v add up to the rows", st.Fates)
		last = st
		return st.Finished()
	}, within, 50*time.Millisecond)
	return last
}

func delivered(fake *sendlooptest.Relay) map[string]int {
	out := map[string]int{}
	for _, m := range fake.Messages() {
		for _, to := range m.EnvelopeTo {
			out[to]++
		}
	}
	return out
}

func TestEnqueueTwiceInsertsNothingNew(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	first, err := sendqueue.Enqueue(ctx, db, newSend("news", 45, 10), sendqueue.Config{})
	require.NoError(t, err)
	assert.Equal(t, 45, first.Rows)
	assert.Equal(t, 5, first.Chunks)
	assert.Equal(t, 5, first.Inserted)
	for _, tc := range []struct {
		name string
		send sendqueue.Send
		err  error
	}{
		{"the same send", newSend("news", 45, 10), nil},
		{"the same send, another chunk size", newSend("news", 45, 7), nil},
		{"other rows", newSend("news", 46, 10), sendqueue.ErrOtherRows},
	} {
		t.Run(tc.name, func(t *testing.T) {
			again, err := sendqueue.Enqueue(ctx, db, tc.send, sendqueue.Config{})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, first.ID, again.ID)
			assert.Zero(t, again.Inserted)
			assert.Equal(t, 5, again.Chunks)
		})
	}
	var jobs int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, sendqueue.ChunkKind).Scan(&jobs))
	assert.Equal(t, 5, jobs)
	st, err := sendqueue.ReadStatus(ctx, db, first.ID, sendqueue.Config{})
	require.NoError(t, err)
	assert.Equal(t, 45, st.Fates[sendqueue.FateWaiting])
	assert.Equal(t, sendqueue.ChunkCounts{Left: 5}, st.Chunks)
}

func TestEnqueueRefusesWhatSendRefuses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	noUnsub := template
	noUnsub.ListUnsubscribe, noUnsub.ListUnsubscribeOneClick = nil, false
	badTag := template
	badTag.Subject = "News for {{{frist}}}"
	for _, tc := range []struct {
		name string
		tmpl smtp.Message
		want error
	}{
		{"no unsubscription", noUnsub, mailmerge.ErrUnsubscribe},
		{"a tag naming nothing", badTag, mailmerge.ErrCheck},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSend("refused-"+tc.name, 3, 10)
			s.Template = &tc.tmpl
			_, err := sendqueue.Enqueue(ctx, db, s, sendqueue.Config{})
			require.ErrorIs(t, err, tc.want)
		})
	}
}

func TestDuplicatesAcrossChunksAreRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	fake, client := relay(t)
	rows := []mailmerge.Row{
		{Line: 2, Address: "ann@example.net", Values: map[string]string{"email": "ann@example.net", "first": "Ann"}},
		{Line: 3, Address: "bob@example.net", Values: map[string]string{"email": "bob@example.net", "first": "Bob"}},
		{Line: 4, Address: "ANN@example.net", Values: map[string]string{"email": "ANN@example.net", "first": "Ann"}},
	}
	s := sendqueue.Send{Journal: "dups", Template: &template, Source: mailmerge.Rows([]string{"email", "first"}, rows), ChunkSize: 2,
		Options: mailmerge.Options{API: testAPI}}
	e, err := sendqueue.Enqueue(ctx, db, s, sendqueue.Config{})
	require.NoError(t, err)
	runWorker(t, db, client(2))
	st := waitFinished(t, db, e.ID, 30*time.Second)
	assert.Equal(t, 2, st.Fates[sendqueue.FateDone])
	assert.Equal(t, 1, st.Fates[sendqueue.FateRejected])
	rejected, err := sendqueue.Rows(ctx, db, e.ID, sendqueue.FateRejected)
	require.NoError(t, err)
	require.Len(t, rejected, 1)
	assert.Equal(t, "duplicate of line 2", rejected[0].Reason)
	assert.Len(t, delivered(fake), 2)
}

// TestTwoWorkersSendEveryRowOnce: two workers, each with its own relay client, share a
// send: every row is delivered once, none twice, and the status adds up as it goes.
func TestTwoWorkersSendEveryRowOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	fake, client := relay(t, sendlooptest.RelayLatency(time.Millisecond, 0))
	const n = 300
	e, err := sendqueue.Enqueue(ctx, db, newSend("two-workers", n, 20), sendqueue.Config{})
	require.NoError(t, err)
	runWorker(t, db, client(2))
	runWorker(t, db, client(2))
	st := waitFinished(t, db, e.ID, 60*time.Second)
	assert.Equal(t, n, st.Fates[sendqueue.FateDone], "%v", st.Fates)
	assert.Equal(t, sendqueue.ChunkCounts{Done: 15}, st.Chunks)
	got := delivered(fake)
	assert.Len(t, got, n)
	for to, k := range got {
		assert.Equal(t, 1, k, "%s delivered %d times", to, k)
	}
}

// TestWorkersInAProgramsOwnClient: a program that runs River adds the workers to its own
// client, beside its own queues.
func TestWorkersInAProgramsOwnClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	fake, client := relay(t)
	require.NoError(t, sendqueue.Migrate(ctx, db, sendqueue.Config{}))
	workers := river.NewWorkers()
	w := sendqueue.NewWorker(db, client(2), sendqueue.WorkerOptions{API: testAPI})
	t.Cleanup(func() { assert.NoError(t, w.Close()) })
	require.NoError(t, sendqueue.AddWorker(workers, w))
	cfg := &river.Config{Workers: workers, Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}}}
	sendqueue.ConfigureClient(cfg, 2)
	assert.LessOrEqual(t, cfg.RescueStuckJobsAfter, sendqueue.RescueAfter)
	assert.Less(t, cfg.JobTimeout, cfg.RescueStuckJobsAfter)
	rc, err := river.NewClient(riverpgxv5.New(db), cfg)
	require.NoError(t, err)
	require.NoError(t, rc.Start(ctx))
	t.Cleanup(func() { assert.NoError(t, rc.Stop(context.Background())) })
	const n = 50
	e, err := sendqueue.Enqueue(ctx, db, newSend("own-client", n, 10), sendqueue.Config{})
	require.NoError(t, err)
	st := waitFinished(t, db, e.ID, 30*time.Second)
	assert.Equal(t, n, st.Fates[sendqueue.FateDone], "%v", st.Fates)
	assert.Len(t, delivered(fake), n)
}

// TestRateHoldsForTheWholeSend: two workers at a rate of 40 a second for the send take
// about as long as one would.
func TestRateHoldsForTheWholeSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	fake, client := relay(t)
	const n, rate = 60, 40.0
	s := newSend("rate", n, 10)
	s.Rate = rate
	e, err := sendqueue.Enqueue(ctx, db, s, sendqueue.Config{})
	require.NoError(t, err)
	runWorker(t, db, client(2))
	runWorker(t, db, client(2))
	waitFinished(t, db, e.ID, 60*time.Second)
	msgs := fake.Messages()
	require.Len(t, msgs, n)
	var firstAt, lastAt time.Time
	for i, m := range msgs {
		if i == 0 || m.Time.Before(firstAt) {
			firstAt = m.Time
		}
		if m.Time.After(lastAt) {
			lastAt = m.Time
		}
	}
	// n messages at rate r span at least (n-1-burst)/r: a tenth of a second of slots may
	// go out at once.
	minSpan := time.Duration(float64(n-1-int(rate/10)) / rate * float64(time.Second))
	assert.GreaterOrEqual(t, lastAt.Sub(firstAt), minSpan, "the send as a whole kept to %v a second", rate)
}

// TestKilledWorkerChunkIsResumed: a worker process killed with SIGKILL in the middle of a
// chunk leaves it to River's rescue; another worker resumes it from the journal: no row
// is delivered twice, the rows in flight at the kill are unknown and not sent again, and
// the status adds up at every read.
func TestKilledWorkerChunkIsResumed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a rescue takes several seconds")
	}
	ctx := context.Background()
	db, dbURL := pool(t)
	fake, client := relay(t, sendlooptest.RelayLatency(2*time.Millisecond, 0))
	const n = 400
	e, err := sendqueue.Enqueue(ctx, db, newSend("killed", n, 100), sendqueue.Config{})
	require.NoError(t, err)

	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	require.NoError(t, os.WriteFile(ca, fake.CACertificatePEM(), 0o600))
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=1", envDB+"="+dbURL, envRelay+"="+fake.Addr(), envRelayCA+"="+ca, envReadyDir+"="+dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	var once sync.Once
	kill := func() { once.Do(func() { _ = cmd.Process.Signal(syscall.SIGKILL); _ = cmd.Wait() }) }
	t.Cleanup(kill)
	require.Eventually(t, func() bool { return len(fake.Messages()) >= 30 }, 30*time.Second, 5*time.Millisecond, "the helper worker sends: %s", &stderr)
	kill()
	killedAt := time.Now()
	sentBefore := len(fake.Messages())
	require.Less(t, sentBefore, n, "killed before the end")

	runWorker(t, db, client(2))
	st := waitFinished(t, db, e.ID, 60*time.Second)
	t.Logf("taken over and finished %v after the kill: %v", time.Since(killedAt).Round(time.Millisecond), st.Fates)
	got := delivered(fake)
	for to, k := range got {
		assert.Equal(t, 1, k, "%s delivered %d times", to, k)
	}
	unknown, err := sendqueue.Rows(ctx, db, e.ID, sendqueue.FateUnknown)
	require.NoError(t, err)
	assert.Equal(t, n, st.Fates[sendqueue.FateDone]+st.Fates[sendqueue.FateUnknown], "%v", st.Fates)
	assert.LessOrEqual(t, len(unknown), 2, "at most the killed worker's rows in flight (2 connections)")
	assert.Len(t, unknown, st.Fates[sendqueue.FateUnknown])
	unknownSet := map[string]bool{}
	for _, r := range unknown {
		unknownSet[r.Address] = true
	}
	for i := range n {
		addr := fmt.Sprintf("r%05d@example.net", i)
		if got[addr] == 0 {
			assert.True(t, unknownSet[addr], "%s was neither delivered nor listed unknown", addr)
		}
	}
	// The chunk completed in the transaction that recorded the dead run's claims unknown.
	var inFlight int
	require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM sendloop_journal_keys WHERE state = 'in_flight'`).Scan(&inFlight))
	assert.Zero(t, inFlight, "no claim left in flight once every chunk is done")
}

// TestSlowdownSnoozesTheChunk: rows the relay defers (4xx, past the client's retries)
// leave their chunk snoozed, not failed; it sends them later, once each.
func TestSlowdownSnoozesTheChunk(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	fake, err := sendlooptest.StartRelay(t, relayUser, relayPassword)
	require.NoError(t, err)
	fake.InjectFault(sendlooptest.RelayFault{Command: "RCPT", Code: 451, Message: "4.7.1 slow down", Times: 5})
	c, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: relayUser, Password: relayPassword},
		smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}), smtp.WithRetry(0, 0), smtp.WithMaxConnections(1))
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	const n = 20
	e, err := sendqueue.Enqueue(ctx, db, newSend("slowdown", n, 10), sendqueue.Config{})
	require.NoError(t, err)
	runWorker(t, db, c)
	st := waitFinished(t, db, e.ID, 30*time.Second)
	assert.Equal(t, n, st.Fates[sendqueue.FateDone], "%v", st.Fates)
	var snoozes int
	require.NoError(t, db.QueryRow(ctx, `SELECT coalesce(sum((metadata->>'snoozes')::int), 0) FROM river_job WHERE kind = $1`, sendqueue.ChunkKind).Scan(&snoozes))
	assert.Positive(t, snoozes, "a deferred row snoozes its chunk")
	got := delivered(fake)
	assert.Len(t, got, n)
	for to, k := range got {
		assert.Equal(t, 1, k, "%s delivered %d times", to, k)
	}
}

// TestStatusOfNoSend: an ID the database does not hold.
func TestStatusOfNoSend(t *testing.T) {
	t.Parallel()
	db, _ := pool(t)
	_, err := sendqueue.ReadStatus(context.Background(), db, "snd_nothing", sendqueue.Config{})
	require.True(t, errors.Is(err, sendqueue.ErrNoSend), "%v", err)
}

// TestErrorsHoldNoPassword: a refused connection's error never shows the password.
func TestErrorsHoldNoPassword(t *testing.T) {
	t.Parallel()
	base := os.Getenv(pgtest.EnvURL)
	if base == "" {
		t.Skip("needs PostgreSQL: set " + pgtest.EnvURL)
	}
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.User = url.UserPassword(u.User.Username(), "wrong-secret-81zq")
	db, err := pgxpool.New(context.Background(), u.String())
	require.NoError(t, err)
	defer db.Close()
	_, err = sendqueue.ReadStatus(context.Background(), db, "snd_x", sendqueue.Config{})
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "wrong-secret-81zq")
}

// TestQueuedSendHonoursSuppression: an address suppressed when the send is enqueued, and
// one suppressed after, before its chunk runs, get no message; both are counted apart.
func TestQueuedSendHonoursSuppression(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := pool(t)
	fake, client := relay(t)
	rows := []mailmerge.Row{}
	for _, a := range []string{"keep1@example.org", "early-block@example.org", "late-block@example.org", "keep2@example.org"} {
		rows = append(rows, mailmerge.Row{Line: len(rows) + 2, Address: a, Values: map[string]string{"email": a, "first": "F"}})
	}
	_, err := testSrv.Suppress(0, "early-block@example.org", "FBL Report")
	require.NoError(t, err)
	s := sendqueue.Send{Journal: "suppressed", Template: &template, Source: mailmerge.Rows([]string{"email", "first"}, rows), ChunkSize: 2,
		Options: mailmerge.Options{API: testAPI}}
	e, err := sendqueue.Enqueue(ctx, db, s, sendqueue.Config{})
	require.NoError(t, err)
	_, err = testSrv.Suppress(0, "late-block@example.org", "Manual") // after the enqueue, before the chunk
	require.NoError(t, err)
	runWorker(t, db, client(2))
	st := waitFinished(t, db, e.ID, 60*time.Second)
	assert.Equal(t, 2, st.Fates[sendqueue.FateDone], "%v", st.Fates)
	assert.Equal(t, 2, st.Fates[sendqueue.FateSuppressed], "%v", st.Fates)
	got := delivered(fake)
	assert.Equal(t, map[string]int{"keep1@example.org": 1, "keep2@example.org": 1}, got)

	_, err = sendqueue.Enqueue(ctx, db, sendqueue.Send{Journal: "no-api", Template: &template,
		Source: mailmerge.Rows([]string{"email", "first"}, rows)}, sendqueue.Config{})
	require.ErrorIs(t, err, mailmerge.ErrNoAPI, "a bulk send is not enqueued without the API")
}
