package sendloop

import (
	"slices"
	"testing"
)

// The report decoders take whatever the service sends: they may refuse it, never panic, and
// what they accept must hold together.

func FuzzDailySeriesUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"2026-03-02":{"Total":"2","Unique":"1"},"2026-03-01":{"Total":1,"Unique":1}}`,
		`{"2026-03-01":{"Unique":3}}`, `{"2026-03-01":"5"}`, `{"2026-03-01 10:00:00":1,"2026-03-01":2}`,
		`[]`, `null`, `{}`, `[{"Total":1}]`, `{"0000-00-00":1}`, `{"2026-02-30":1}`, `{"x":1}`,
		`{"2026-03-01":{"Total":1e3}}`, `{"2026-03-01":{"Total":"9999999999999999999"}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var s DailySeries
		if err := s.UnmarshalJSON(data); err != nil {
			return
		}
		if !slices.IsSortedFunc(s, func(a, b DailyActivity) int { return a.Date.Compare(b.Date.Time) }) {
			t.Fatalf("not in date order: %v", s)
		}
		for i, d := range s {
			if d.Date.IsZero() {
				t.Fatalf("unset date in %v", s)
			}
			if i > 0 && s[i-1].Date.Equal(d.Date.Time) {
				t.Fatalf("date %s twice in %v", d.Date, s)
			}
		}
		stable(t, data, decoder[DailySeries](), wireDailySeries)
	})
}

func FuzzGroupedCountsUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"GB":{"London":"3","Leeds":1},"US":[],"DE":2}`, `{"Apple Mail":{"16":2},"Gmail":{"":1}}`,
		`[]`, `[{"a":1}]`, `{"GB":{"London":"x"}}`, `{"GB":null}`, `{"GB":{"a":{"b":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[GroupedCounts](), marshal[GroupedCounts])
		var g GroupedCounts
		if err := g.UnmarshalJSON(data); err != nil {
			return
		}
		sum := 0
		for _, inner := range g {
			if inner == nil {
				t.Fatalf("nil group in %v", g)
			}
			for _, n := range inner {
				sum += n
			}
		}
		if sum != g.Total() {
			t.Fatalf("Total %d, sum %d", g.Total(), sum)
		}
	})
}

func FuzzSpamComplaintStatsUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"2026-03-02":{"Total":2,"Unique":1}}`, `{"2026-03-02":4}`, `{"Total":"9","Unique":4}`,
		`{"TotalSPAMComplaints":5,"2026-01-01":{"Total":2,"Unique":2},"Chart":"x"}`, `"3"`, `12`,
		`[["a@example.com","2026-01-01 10:00:00"],["b@example.com","2026-01-03"]]`, `[{"EmailAddress":"a@b.c","Date":"2026-01-01"}]`,
		`[]`, `null`, `[[]]`, `[["a"]]`, `{"Total":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var st SpamComplaintStats
		if err := st.UnmarshalJSON(data); err != nil {
			return
		}
		if !slices.IsSortedFunc(st.Days, func(a, b DailyActivity) int { return a.Date.Compare(b.Date.Time) }) {
			t.Fatalf("days not in order: %v", st.Days)
		}
		stable(t, data, decoder[SpamComplaintStats](), wireSpamComplaintStats)
	})
}

func FuzzOverallReportsUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"OpenPerformance":"12.5%","OpenAvg":"3","TotalSPAMComplaints":"4","HighestOpenRateDay":"Tuesday"}`,
		`{"TotalRecipients":"10","TotalDelivered":9,"TotalDeliveredRatio":"90%","UniqueOpensRatio":null}`,
		`{"Hard":"2","Soft":1,"Not Bounced":"40"}`, `[]`, `{"OpenAvg":"NaN"}`, `{"TotalRecipients":1.5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// a NaN or an infinity would not encode
		stable(t, data, decoder[ListOverallReport](), marshal[ListOverallReport])
		stable(t, data, decoder[CampaignOverallReport](), marshal[CampaignOverallReport])
		stable(t, data, decoder[BounceCounts](), wireAs[BounceCounts](map[string]string{"NotBounced": "Not Bounced"}))
	})
}

func FuzzCampaignDataRecordsUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"SubscriberID":"4","DetectionDate":"2026-03-02 10:00:00","CountryCode":"FR","Latitude":"48.85","Longtitude":"2.35"}`,
		`{"SubscriberID":1,"ListID":"2","BounceType":"Hard","BounceDate":"2026-03-02"}`,
		`{"UnsubscriptionDate":"0000-00-00 00:00:00","Channel":"Link"}`, `[]`, `{"Latitude":"1e400"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		stable(t, data, decoder[CampaignOpenLocation](), wireAs[CampaignOpenLocation](map[string]string{"Longitude": "Longtitude"}))
		stable(t, data, decoder[CampaignBounce](), marshal[CampaignBounce])
		stable(t, data, decoder[CampaignUnsubscription](), marshal[CampaignUnsubscription])
		stable(t, data, decoder[CampaignForward](), marshal[CampaignForward])
		stable(t, data, decoder[CampaignBrowserView](), marshal[CampaignBrowserView])
		stable(t, data, decoder[Campaign](), marshal[Campaign])
		stable(t, data, decoder[CampaignEmailOpen](), wireAs[CampaignEmailOpen](nil))
		stable(t, data, decoder[CampaignLinkClick](), wireAs[CampaignLinkClick](nil))
		stable(t, data, decoder[Person](), wireAs[Person](map[string]string{"UserID": "User ID", "EmailAddress": "Email Address",
			"EntryDate": "Entry Date", "LastSeenDate": "Last Seen Date", "IPAddress": "IP Address"}))
	})
}
