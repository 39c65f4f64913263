package sendlooptest

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// CampaignEventKind names what a recipient did with a delivered campaign.
type CampaignEventKind string

// The recipient activity SimulateEvents records.
const (
	EventOpen           CampaignEventKind = "open"
	EventClick          CampaignEventKind = "click"
	EventBrowserView    CampaignEventKind = "browser view"
	EventForward        CampaignEventKind = "forward"
	EventUnsubscription CampaignEventKind = "unsubscription"
	EventHardBounce     CampaignEventKind = "hard bounce"
	EventSoftBounce     CampaignEventKind = "soft bounce"
	EventSpamComplaint  CampaignEventKind = "spam complaint"
)

// CampaignEvent is one recipient activity for SimulateEvents.
type CampaignEvent struct {
	// Kind is what the recipient did, one of the Event constants (EventOpen, …).
	Kind CampaignEventKind
	// Email is the recipient, one of the addresses SimulateSend returned.
	Email string
	// After is how long after the delivery the event happens; delivery + After must not be
	// after the fake's now (deliver earlier with SimulateSendAt). The windowed reports
	// count events whose date is within the first 20 days from the delivery date.
	After time.Duration

	// Country and City are where an open was read: the country code and city of the open
	// locations report and records. Opens without a Country stay out of both.
	Country, City string
	// Latitude and Longitude are where an open was read, in data.campaign.openlocations
	// (Longitude under the service's spelling, Longtitude).
	Latitude, Longitude float64
	// EmailClient is the client an open was read with, a key of
	// report.campaign.emailclients. Opens without one stay out of that report.
	EmailClient   string
	ClientVersion string // the EmailClient's version, the inner key of that report
	ContentCode   string // an open's ContentCode in data.campaign.openlocations

	// Link is the address a click followed.
	Link string
	// Channel is how an unsubscription came (data.campaign.unsubscriptions); default "Link".
	Channel string
	// IP is the address an unsubscription came from; default "0.0.0.0" (unset).
	IP string
}

// activity is a recorded CampaignEvent, bound to its recipient.
type activity struct {
	CampaignEvent
	CampaignID int
	sub        *subscriber
	listID     int
	at         time.Time
	seq        int // recording order, to keep equal times stable
}

var knownEventKinds = []CampaignEventKind{EventOpen, EventClick, EventBrowserView, EventForward,
	EventUnsubscription, EventHardBounce, EventSoftBounce, EventSpamComplaint}

// SimulateSend delivers a Draft campaign now, by the server's clock, and returns the
// addresses it reached in delivery order. The recipients are the Subscribed members of the
// target lists and segments that are neither hard-bounced nor suppressed, each address once.
// The campaign becomes Sent with SendDate and SendTime set (in UTC).
//
// Recipient activity cannot come later than the fake's now (see SimulateEvents): to record
// what recipients did over hours or days, deliver the campaign that long ago with
// SimulateSendAt.
func (s *Server) SimulateSend(campaignID int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.simulateSend(campaignID, s.now())
}

// SimulateSendAt is SimulateSend with the delivery dated at, which may be in the past but
// not after the server's now: a campaign delivered days ago can carry days of activity
// (SimulateEvents) and fill the reports, whose window starts at the delivery date. The
// recipients are those of the current state, whatever their subscription dates.
func (s *Server) SimulateSendAt(campaignID int, at time.Time) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	switch {
	case at.IsZero():
		return nil, fmt.Errorf("sendlooptest: campaign %d: no delivery time", campaignID)
	case at.After(now):
		return nil, fmt.Errorf("sendlooptest: campaign %d: delivery at %s is after the fake's now, %s",
			campaignID, at.UTC().Format(time.DateTime), now.UTC().Format(time.DateTime))
	}
	return s.simulateSend(campaignID, at)
}

// simulateSend delivers a campaign at the given time; the caller holds s.mu.
func (s *Server) simulateSend(campaignID int, at time.Time) ([]string, error) {
	camp := s.state.campaigns.byID[campaignID]
	switch {
	case camp == nil:
		return nil, fmt.Errorf("sendlooptest: no campaign %d", campaignID)
	case !camp.deliveredAt.IsZero():
		return nil, fmt.Errorf("sendlooptest: campaign %d was already sent", campaignID)
	}
	at = at.UTC()
	camp.recipients = s.state.campaignTargets(camp)
	camp.deliveredAt = at
	camp.Status = campaignSent
	camp.SendDate, camp.SendTime, camp.SendTimeZone = at.Format(dateLayout), at.Format("15:04:05"), systemTimeZone
	out := make([]string, len(camp.recipients))
	for i, sub := range camp.recipients {
		out[i] = sub.Email
	}
	return out, nil
}

// campaignTargets resolves a campaign's lists and segments into subscribers.
func (st *state) campaignTargets(camp *campaign) []*subscriber {
	var out []*subscriber
	seen := map[string]bool{}
	add := func(sub *subscriber) {
		key := strings.ToLower(sub.Email)
		if seen[key] || sub.Status != statusSubscribed || sub.BounceType == "Hard" || st.suppressed(sub.list.ID, sub.Email) {
			return
		}
		seen[key] = true
		out = append(out, sub)
	}
	for _, id := range camp.Lists {
		if l := st.lists.get(id); l != nil {
			for _, sub := range l.members {
				add(sub)
			}
		}
	}
	for _, id := range camp.Segments {
		if l := st.findSegment(id); l != nil {
			seg := l.Segments[id]
			for _, sub := range l.members {
				if sub.Fields.get(seg.FieldID) == seg.Value {
					add(sub)
				}
			}
		}
	}
	return out
}

// SimulateEvents records recipient activity on a campaign that SimulateSend delivered. Every
// event is checked first (a known Kind, a recipient of the delivery, After not negative, an
// unsubscription only while subscribed); nothing is recorded unless all pass.
//
// Besides being recorded, an unsubscription unsubscribes the recipient from its list (the
// list's unsubscription webhook is posted before SimulateEvents returns), a hard or soft
// bounce sets the subscriber's BounceType (a soft bounce never overrides a hard one), and a
// spam complaint adds the address to the global suppression list with the type 'FBL Report'.
//
// Activity has happened: an event dated after the fake's now (delivery + After later than
// the server's clock) is refused, and the clock never moves. Deliver the campaign in the
// past with SimulateSendAt to record activity over hours or days.
func (s *Server) SimulateEvents(campaignID int, events ...CampaignEvent) error {
	s.mu.Lock()
	err := s.state.simulate(campaignID, events, s.now())
	s.mu.Unlock()
	s.deliverWebhooks()
	return err
}

// simulate records events, none of them after now.
func (st *state) simulate(campaignID int, events []CampaignEvent, now time.Time) error {
	camp := st.campaigns.byID[campaignID]
	switch {
	case camp == nil:
		return fmt.Errorf("sendlooptest: no campaign %d", campaignID)
	case camp.deliveredAt.IsZero():
		return fmt.Errorf("sendlooptest: campaign %d has not been sent: call SimulateSend first", campaignID)
	}
	subs := make([]*subscriber, len(events))
	leaving := map[*subscriber]bool{}
	for i, e := range events {
		if !slices.Contains(knownEventKinds, e.Kind) {
			return fmt.Errorf("sendlooptest: event %d: unknown kind %q", i, e.Kind)
		}
		if e.After < 0 {
			return fmt.Errorf("sendlooptest: event %d: After %v is before the delivery", i, e.After)
		}
		if at := camp.deliveredAt.Add(e.After); at.After(now) {
			return fmt.Errorf("sendlooptest: event %d: %s (delivery + %v) is after the fake's now, %s: deliver the campaign earlier (SimulateSendAt)",
				i, at.UTC().Format(time.DateTime), e.After, now.UTC().Format(time.DateTime))
		}
		idx := slices.IndexFunc(camp.recipients, func(sub *subscriber) bool { return strings.EqualFold(sub.Email, strings.TrimSpace(e.Email)) })
		if idx < 0 {
			return fmt.Errorf("sendlooptest: event %d: %q did not receive campaign %d", i, e.Email, campaignID)
		}
		subs[i] = camp.recipients[idx]
		if e.Kind == EventUnsubscription {
			if subs[i].Status != statusSubscribed || leaving[subs[i]] {
				return fmt.Errorf("sendlooptest: event %d: %s is not subscribed to list %d", i, e.Email, subs[i].list.ID)
			}
			leaving[subs[i]] = true
		}
	}
	for i, e := range events {
		sub := subs[i]
		at := camp.deliveredAt.Add(e.After)
		if e.Kind == EventUnsubscription {
			if e.Channel == "" {
				e.Channel = "Link"
			}
			if e.IP == "" {
				e.IP = "0.0.0.0"
			}
		}
		if err := st.applyEvent(sub, e, at); err != nil {
			return err // checked above: cannot happen
		}
		st.activity = append(st.activity, &activity{CampaignEvent: e, CampaignID: campaignID, sub: sub,
			listID: sub.list.ID, at: at, seq: len(st.activity)})
	}
	return nil
}

// applyEvent carries out what an event does to its recipient's record: an unsubscription
// unsubscribes (posting the webhook), a bounce sets BounceType (soft never over hard), a
// spam complaint suppresses the address globally. Other kinds change nothing.
func (st *state) applyEvent(sub *subscriber, e CampaignEvent, at time.Time) error {
	switch e.Kind {
	case EventUnsubscription:
		if _, f := st.unsubscribe(sub.list, sub.Email, e.IP, at); f != ok {
			return fmt.Errorf("sendlooptest: %s is not subscribed to list %d", sub.Email, sub.list.ID)
		}
	case EventHardBounce:
		sub.setBounce(st, "Hard")
	case EventSoftBounce:
		if sub.BounceType != "Hard" {
			sub.setBounce(st, "Soft")
		}
	case EventSpamComplaint:
		st.suppress(0, sub.Email, "FBL Report")
	}
	return nil
}

// activityOf returns a campaign's (or with campaignID 0 every campaign's) events of the
// given kinds, in time order.
func (st *state) activityOf(campaignID int, kinds ...CampaignEventKind) []*activity {
	var out []*activity
	for _, a := range st.activity {
		if (campaignID == 0 || a.CampaignID == campaignID) && slices.Contains(kinds, a.Kind) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(a, b *activity) int {
		if c := a.at.Compare(b.at); c != 0 {
			return c
		}
		return a.seq - b.seq
	})
	return out
}

// utcDay is the UTC calendar day of t.
func utcDay(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// inWindow reports whether t falls on one of the 20 dates from the delivery date.
func (camp *campaign) inWindow(t time.Time) bool {
	first := utcDay(camp.deliveredAt)
	return !utcDay(t).Before(first) && utcDay(t).Before(first.AddDate(0, 0, reportWindowDays))
}

// windowed keeps the events within the report window.
func (camp *campaign) windowed(events []*activity) []*activity {
	var out []*activity
	for _, a := range events {
		if camp.inWindow(a.at) {
			out = append(out, a)
		}
	}
	return out
}
