package sendlooptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// webhookInfo is a delivery of GET …/webhooks.
type webhookInfo struct {
	URL        string `json:"url"`
	Action     string `json:"action"`
	Body       string `json:"body"`
	Attempts   int    `json:"attempts"`
	StatusCode int    `json:"status_code"`
	Error      string `json:"error"`
	Delivered  bool   `json:"delivered"`
}

func webhookInfos(ds []WebhookDelivery) []webhookInfo {
	out := []webhookInfo{}
	for _, d := range ds {
		out = append(out, webhookInfo{URL: d.URL, Action: d.Action, Body: string(d.Body), Attempts: d.Attempts,
			StatusCode: d.StatusCode, Error: d.Err, Delivered: d.Delivered})
	}
	return out
}

func (c *Control) apiWebhooks(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"webhooks": webhookInfos(c.srv.Webhooks())})
}

// listInfo is a list of GET …/lists.
type listInfo struct {
	ID                int         `json:"id"`
	Name              string      `json:"name"`
	OptInMode         string      `json:"opt_in_mode"`
	CustomFields      []fieldInfo `json:"custom_fields"`
	Subscribers       int         `json:"subscribers"`
	SubscriptionURL   string      `json:"subscription_url"`
	UnsubscriptionURL string      `json:"unsubscription_url"`
}

type fieldInfo struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// listInfos reads the lists, by ascending ID.
func (s *Server) listInfos() []listInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []listInfo{}
	for _, l := range s.state.lists.sorted() {
		li := listInfo{ID: l.ID, Name: l.Name, OptInMode: l.OptInMode, CustomFields: []fieldInfo{}, Subscribers: len(l.members),
			SubscriptionURL: l.Settings["WebServiceSubscriptionURL"], UnsubscriptionURL: l.Settings["WebServiceUnsubscriptionURL"]}
		for _, f := range l.Fields {
			li.CustomFields = append(li.CustomFields, fieldInfo{ID: f.ID, Name: f.FieldName})
		}
		out = append(out, li)
	}
	return out
}

func (c *Control) apiLists(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"lists": c.srv.listInfos()})
}

// members returns a page of a list's records as subscriber.browse writes them, and how
// many the list holds.
func (s *Server) members(listID, start, limit int) ([]object, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.state.lists.get(listID)
	if l == nil {
		return nil, 0, fmt.Errorf("no list %d", listID)
	}
	out := []object{}
	for i := start; i < len(l.members) && (limit == 0 || len(out) < limit); i++ {
		out = append(out, l.members[i].object())
	}
	return out, len(l.members), nil
}

func (c *Control) apiMembers(w http.ResponseWriter, r *http.Request) {
	listID, ok := pathID(w, r)
	if !ok {
		return
	}
	f, err := readFilter(r.URL.Query(), 100)
	if err != nil {
		jsonError(w, http.StatusBadRequest, "%v", err)
		return
	}
	page, total, err := c.srv.members(listID, f.start, f.limit)
	if err != nil {
		jsonError(w, http.StatusNotFound, "%v", err)
		return
	}
	// The records go out as the service writes them, in their order of keys.
	b := fmt.Appendf(nil, `{"list_id":%d,"total":%d,"count":%d,"start":%d,"members":`, listID, total, len(page), f.start)
	b = append(appendJSON(b, page), "}\n"...)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(b)
}

// pathID reads the {id} of the path as a positive number, or answers 404.
func pathID(w http.ResponseWriter, r *http.Request) (int, bool) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || id <= 0 {
		jsonError(w, http.StatusNotFound, "%q is not an ID", r.PathValue("id"))
		return 0, false
	}
	return id, true
}

// param reads a POST parameter: a form field (of the body or the query) or, for a JSON
// body, a member.
func param(r *http.Request, name string) string {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		return strings.TrimSpace(r.FormValue(name))
	}
	if r.Form == nil {
		r.Form = r.URL.Query()
		var body map[string]any
		if json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body) == nil {
			for k, v := range body {
				switch v := v.(type) {
				case string:
					r.Form.Set(k, v)
				case float64:
					r.Form.Set(k, strconv.FormatFloat(v, 'f', -1, 64))
				}
			}
		}
	}
	return strings.TrimSpace(r.Form.Get(name))
}

// webhooksSince returns the deliveries after the first n.
func (c *Control) webhooksSince(n int) []webhookInfo {
	all := c.srv.Webhooks()
	return webhookInfos(all[min(n, len(all)):])
}

func (c *Control) apiConfirm(w http.ResponseWriter, r *http.Request) {
	listID, ok := pathID(w, r)
	if !ok {
		return
	}
	before := len(c.srv.Webhooks())
	email := param(r, "email")
	if err := c.confirm(listID, email); err != nil {
		actionError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"list_id": listID, "email": email, "status": "Subscribed",
		"webhooks": c.webhooksSince(before)})
}

// actionError answers the failure of an action: 404 for a list, campaign or member that
// does not exist, 409 for one whose state does not allow the action.
func actionError(w http.ResponseWriter, err error) {
	status := http.StatusConflict
	if _, missing := errors.AsType[*missingError](err); missing {
		status = http.StatusNotFound
	}
	jsonError(w, status, "%s", strings.TrimPrefix(err.Error(), "sendlooptest: "))
}

func (c *Control) apiDeleteMember(w http.ResponseWriter, r *http.Request) {
	listID, ok := pathID(w, r)
	if !ok {
		return
	}
	email := strings.TrimSpace(r.PathValue("email"))
	if email == "" {
		jsonError(w, http.StatusBadRequest, "email is missing")
		return
	}
	if err := c.srv.DeleteMember(listID, email); err != nil {
		actionError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"list_id": listID, "email": email, "deleted": true, "webhooks": []webhookInfo{}})
}

// confirm is Confirm with the address checked first.
func (c *Control) confirm(listID int, email string) error {
	if email == "" {
		return errors.New("email is missing")
	}
	return c.srv.Confirm(listID, email)
}

func (c *Control) apiSend(w http.ResponseWriter, r *http.Request) {
	id, ok := pathID(w, r)
	if !ok {
		return
	}
	to, err := c.srv.SimulateSend(id)
	if err != nil {
		jsonError(w, http.StatusConflict, "%s", strings.TrimPrefix(err.Error(), "sendlooptest: "))
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"campaign_id": id, "recipients": nonNil(to)})
}

// eventKinds are the names the control API takes for the kinds of SimulateEvents, besides
// the constants' own values.
var eventKinds = map[string]CampaignEventKind{
	"unsubscribe": EventUnsubscription, "bounce": EventHardBounce, "complaint": EventSpamComplaint,
}

// ParseEventKind reads an event kind as the control API and `sendloop fake event` take it:
// a CampaignEventKind's value ("open", "hard bounce", …) with '-' or '_' for spaces, or
// unsubscribe, bounce (hard) and complaint.
func ParseEventKind(v string) (CampaignEventKind, error) {
	k := strings.ToLower(strings.NewReplacer("-", " ", "_", " ").Replace(strings.TrimSpace(v)))
	if kind, ok := eventKinds[k]; ok {
		return kind, nil
	}
	if slices.Contains(knownEventKinds, CampaignEventKind(k)) {
		return CampaignEventKind(k), nil
	}
	return "", fmt.Errorf("unknown event kind %q: open, click, forward, browser-view, unsubscribe, bounce, soft-bounce or complaint", v)
}

func (c *Control) apiEvent(w http.ResponseWriter, r *http.Request) {
	kind, err := ParseEventKind(param(r, "kind"))
	if err != nil {
		jsonError(w, http.StatusBadRequest, "%v", err)
		return
	}
	var listID, campaignID int
	for _, p := range []struct {
		name string
		v    *int
	}{{"list", &listID}, {"campaign", &campaignID}} {
		if v := param(r, p.name); v != "" {
			if *p.v, err = strconv.Atoi(v); err != nil || *p.v <= 0 {
				jsonError(w, http.StatusBadRequest, "%s=%q is not an ID", p.name, v)
				return
			}
		}
	}
	email := param(r, "email")
	if email == "" {
		jsonError(w, http.StatusBadRequest, "email is missing")
		return
	}
	before := len(c.srv.Webhooks())
	campaignID, err = c.srv.event(kind, email, listID, campaignID)
	if err != nil {
		actionError(w, err)
		return
	}
	answer := map[string]any{"kind": string(kind), "email": email, "webhooks": c.webhooksSince(before)}
	if campaignID > 0 {
		answer["campaign_id"] = campaignID
	}
	if listID > 0 {
		answer["list_id"] = listID
	}
	writeJSON(w, http.StatusOK, answer)
}

// event records one event for email: on campaignID, or the newest delivered campaign that
// reached the address (as a member of listID, when given), through SimulateEvents; with no
// such campaign, an unsubscription, bounce or complaint applies to the list's member as
// SimulateEvents would apply it. It returns the campaign used, 0 for none.
func (s *Server) event(kind CampaignEventKind, email string, listID, campaignID int) (int, error) {
	s.mu.Lock()
	now := s.now()
	st := s.state
	var camp *campaign
	if campaignID > 0 {
		if camp = st.campaigns.byID[campaignID]; camp == nil {
			s.mu.Unlock()
			return 0, &missingError{fmt.Sprintf("no campaign %d", campaignID)}
		}
	} else {
		camp = st.newestDelivery(email, listID)
	}
	if camp != nil {
		s.mu.Unlock()
		after := max(now.Sub(camp.deliveredAt), 0)
		return camp.ID, s.SimulateEvents(camp.ID, CampaignEvent{Kind: kind, Email: email, After: after})
	}
	err := st.listEvent(kind, email, listID, now)
	s.mu.Unlock()
	s.deliverWebhooks()
	return 0, err
}

// newestDelivery returns the newest delivered campaign whose recipients hold email (as a
// member of listID unless 0), or nil.
func (st *state) newestDelivery(email string, listID int) *campaign {
	var best *campaign
	for _, camp := range st.campaigns.byID {
		if camp.deliveredAt.IsZero() || best != nil && (camp.deliveredAt.Before(best.deliveredAt) ||
			camp.deliveredAt.Equal(best.deliveredAt) && camp.ID < best.ID) {
			continue
		}
		if slices.ContainsFunc(camp.recipients, func(sub *subscriber) bool {
			return strings.EqualFold(sub.Email, strings.TrimSpace(email)) && (listID == 0 || sub.list.ID == listID)
		}) {
			best = camp
		}
	}
	return best
}

// listEvent applies an event that needs no campaign to a member of a list.
func (st *state) listEvent(kind CampaignEventKind, email string, listID int, now time.Time) error {
	switch kind {
	case EventUnsubscription, EventHardBounce, EventSoftBounce, EventSpamComplaint:
	default:
		return fmt.Errorf("no delivered campaign reached %s: a %s needs one (POST %s/campaigns/{ID}/send)", email, kind, ControlPrefix)
	}
	if listID == 0 {
		return fmt.Errorf("no delivered campaign reached %s: name its list (list=ID)", email)
	}
	l := st.lists.get(listID)
	if l == nil {
		return noList(listID)
	}
	sub := l.member(email)
	if sub == nil {
		return &missingError{fmt.Sprintf("%s is not in list %d", email, listID)}
	}
	return st.applyEvent(sub, CampaignEvent{Kind: kind, Email: email, IP: "0.0.0.0"}, now)
}

func (c *Control) apiReset(w http.ResponseWriter, r *http.Request) {
	if err := c.reset(r.Context()); err != nil {
		jsonError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]bool{"reset": true})
}

// reset brings the fake back to its seed.
func (c *Control) reset(ctx context.Context) error {
	c.srv.resetState()
	if c.relay != nil {
		c.relay.ClearMessages()
	}
	if c.reseed != nil {
		if err := c.reseed(ctx, c.srv); err != nil {
			return fmt.Errorf("reseeding: %w", err)
		}
	}
	return nil
}

// resetState empties the account: lists, campaigns, activity, outbox, webhooks, faults.
// The keys, the clock, the latency and the request log stay.
func (s *Server) resetState() {
	s.deliverMu.Lock() // no delivery in flight records into the old state
	defer s.deliverMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = newState(s.now())
	s.webhooks = nil
	s.faults = map[string][]*Fault{}
	s.executions = map[string]int{}
}
