package sendlooptest

import (
	"strconv"
	"strings"

	cmdtable "github.com/go-sendloop/sendloop/internal/commands"
)

// exportsHandlers are the handlers of exports commands; dispatch pairs them with the command table.
var exportsHandlers = map[string]handler{
	cmdtable.ExportUnsubscriptions: exportUnsubscriptions,
	cmdtable.ExportSuppressionList: exportSuppressionList,
	cmdtable.ExportSpamComplaints:  exportSpamComplaints,
	cmdtable.ExportBounces:         exportBounces,
}

// exportUnsubscriptions lists the unsubscribed members of one list (ListID) or of every
// list, with the campaign that unsubscribed them, if any.
func exportUnsubscriptions(c *call) (object, *apiError) {
	all := c.st.lists.sorted()
	if strings.TrimSpace(c.form.Get("ListID")) != "" {
		l, apiErr := c.findList()
		if apiErr != nil {
			return nil, apiErr
		}
		all = []*list{l}
	}
	byCampaign := map[*subscriber]int{}
	for _, a := range c.st.activityOf(0, EventUnsubscription) {
		byCampaign[a.sub] = a.CampaignID // the latest wins
	}
	out := []object{}
	for _, l := range all {
		for _, sub := range l.members {
			if sub.Status != statusUnsubscribed {
				continue
			}
			out = append(out, object{{"CampaignID", strconv.Itoa(byCampaign[sub])}, {"ListID", strconv.Itoa(l.ID)},
				{"SubscriberID", strconv.Itoa(sub.ID)}, {"EmailAddress", sub.Email},
				{"UnsubscriptionDate", sub.UnsubscriptionDate}, {"UnsubscriptionIP", sub.UnsubscriptionIP}})
		}
	}
	return object{{"Unsubscriptions", out}}, nil
}

// exportSuppressionList lists every suppression entry, global or of a list, as a pair.
func exportSuppressionList(c *call) (object, *apiError) {
	out := []any{}
	for _, e := range c.st.suppressions.entries {
		out = append(out, []string{e.Email, e.Type})
	}
	return object{{"SuppressionList", out}}, nil
}

// exportSpamComplaints lists the recorded complaints, oldest first, as pairs.
func exportSpamComplaints(c *call) (object, *apiError) {
	out := []any{}
	for _, a := range c.st.activityOf(0, EventSpamComplaint) {
		out = append(out, []string{a.sub.Email, a.at.UTC().Format(dateTimeLayout)})
	}
	return object{{"SpamComplaints", out}}, nil
}

// exportBounces lists the recorded bounces of one kind: BounceType 'hard' or 'soft'
// (any case), else 119.
func exportBounces(c *call) (object, *apiError) {
	var kind CampaignEventKind
	switch strings.ToLower(strings.TrimSpace(c.form.Get("BounceType"))) {
	case "hard":
		kind = EventHardBounce
	case "soft":
		kind = EventSoftBounce
	default:
		return nil, &apiError{code: 119, message: "BounceType value must be 'hard' or 'soft'", fields: []string{"BounceType"}}
	}
	out := []object{}
	for _, a := range c.st.activityOf(0, kind) {
		out = append(out, object{{"CampaignID", strconv.Itoa(a.CampaignID)}, {"ListID", strconv.Itoa(a.listID)},
			{"SubscriberID", strconv.Itoa(a.sub.ID)}, {"EmailAddress", a.sub.Email},
			{"BounceType", bounceName(a.Kind)}, {"DetectionDate", a.at.UTC().Format(dateTimeLayout)}})
	}
	return object{{"BounceData", out}}, nil
}
