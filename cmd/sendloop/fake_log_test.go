package main

import (
	"strings"
	"testing"
	"time"
)

// TestFakeLogsEachRequestOnce: the fake logs every API request once, as it arrives, and
// not the requests that seeded its demo data.
func TestFakeLogsEachRequestOnce(t *testing.T) {
	t.Parallel()
	p := startFake(t, false, "--log-size", "2")
	const calls = 5
	for range calls {
		r := invocation{args: []string{"lists"}, env: p.env}.run(t)
		expect(t, r, exitOK, []string{"Demo"}, nil)
	}
	deadline := time.Now().Add(10 * time.Second)
	for strings.Count(p.stderr.String(), "api: POST list.getlist") < calls && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if code := p.stop(t); code != exitOK {
		t.Errorf("exit code %d", code)
	}
	log := p.stderr.String()
	if n := strings.Count(log, "api: POST list.getlist"); n != calls {
		t.Errorf("%d list.getlist lines for %d calls:\n%s", n, calls, log)
	}
	if strings.Contains(log, "list.create") || strings.Contains(log, "subscriber.import") {
		t.Errorf("the demo data's requests are logged:\n%s", log)
	}
}

func TestFakeLogSizeNegative(t *testing.T) {
	t.Parallel()
	r := invocation{args: []string{"fake", "--log-size", "-1"}, env: []string{}}.run(t)
	expect(t, r, exitUsage, nil, []string{"--log-size cannot be negative"})
}
