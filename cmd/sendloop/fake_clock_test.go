package main

import (
	"encoding/json"
	"testing"
	"time"
)

// TestFakeClockIsTheHosts checks that the demo data of --fake leaves the fake's clock on the
// host's time, and that its campaign's activity, all in the past, still fills the report.
func TestFakeClockIsTheHosts(t *testing.T) {
	t.Parallel()
	before := time.Now().UTC().Truncate(time.Second)
	r := invocation{args: []string{"--fake", "--json", "call", "system.systemdate.get"}, env: []string{}}.run(t)
	after := time.Now().UTC()
	expect(t, r, exitOK, nil, nil)
	var date struct{ SystemDate string }
	if err := json.Unmarshal([]byte(r.stdout), &date); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	got, err := time.Parse(time.DateTime, date.SystemDate)
	if err != nil {
		t.Fatal(err)
	}
	if got.Before(before) || got.After(after) {
		t.Errorf("the fake's date is %s, the host's between %s and %s", got, before.Format(time.DateTime), after.Format(time.DateTime))
	}

	r = invocation{args: []string{"--fake", "--json", "report", "campaign", "1"}, env: []string{}}.run(t)
	expect(t, r, exitOK, nil, nil)
	var report struct {
		UniqueOpens        int    `json:"unique_opens"`
		UniqueClicks       int    `json:"unique_clicks"`
		HighestOpenRateDay string `json:"highest_open_rate_day"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &report); err != nil {
		t.Fatalf("%v: %s", err, r.stdout)
	}
	if report.UniqueOpens != 2 || report.UniqueClicks != 1 {
		t.Errorf("the demo campaign's report counts %d opens and %d clicks, want 2 and 1: %s", report.UniqueOpens, report.UniqueClicks, r.stdout)
	}
	day, err := time.Parse(time.DateOnly, report.HighestOpenRateDay)
	if err != nil || day.After(time.Now().UTC()) {
		t.Errorf("highest open day %q: %v (not in the past)", report.HighestOpenRateDay, err)
	}
}
