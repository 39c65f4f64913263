package mailmerge

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/go-sendloop/sendloop"
)

// The merge variables every row of OpenList's source holds, besides the list's custom
// fields.
const (
	ListVarEmailAddress = "EmailAddress"
	ListVarSubscriberID = "SubscriberID"
	ListVarListID       = "ListID"
)

// listSource is the source of a list's members: OpenList's.
type listSource struct {
	api    *sendloop.Client
	listID int
	fields []listField
	cols   []string
}

// listField is a custom field of the list and the merge variable it is read into.
type listField struct {
	id   int
	name string
}

// OpenList returns the source of a list's members, read page by page as they are sent
// (subscriber.browse, 100 members a page, at flat memory). It reads the list's custom
// fields now (one list.get), for the check needs the names a tag may use; it reads no
// member. Each row's merge variables are EmailAddress, SubscriberID, ListID and each
// custom field under its name as the account shows it (spaces and other characters a
// merge variable cannot hold become '_', as SuggestName makes them; a name taken already,
// such as a field named EmailAddress, is under CustomField<id> instead). Rows are keyed in
// the journal by subscriber ID. A member who is not Subscribed (unsubscribed,
// hard-bounced, confirmation pending) is a row whose NotSubscribed says so: a Job sends it
// nothing, unless Options.IncludeNotSubscribed.
//
// A Job of this source reads its members and suppressions through c, unless Options.API
// names another client.
func OpenList(ctx context.Context, c *sendloop.Client, listID int) (Source, error) {
	if c == nil {
		return nil, fmt.Errorf("mailmerge: OpenList needs a client")
	}
	if listID <= 0 {
		return nil, fmt.Errorf("mailmerge: list ID %d: want a list's ID", listID)
	}
	l, err := c.Lists.Get(ctx, listID, sendloop.ListGetParams{CustomFields: true})
	if err != nil {
		return nil, fmt.Errorf("mailmerge: list %d: %w", listID, err)
	}
	s := &listSource{api: c, listID: listID, cols: []string{ListVarEmailAddress, ListVarSubscriberID, ListVarListID}}
	taken := map[string]bool{}
	for _, n := range s.cols {
		taken[strings.ToLower(n)] = true
	}
	for _, f := range l.CustomFields {
		name := strings.TrimSpace(f.FieldName)
		if !ValidName(name) {
			name = SuggestName(name)
		}
		if name == "" || !ValidName(name) || taken[strings.ToLower(name)] {
			name = "CustomField" + strconv.Itoa(f.CustomFieldID)
		}
		if taken[strings.ToLower(name)] {
			continue // the same field twice
		}
		taken[strings.ToLower(name)] = true
		s.fields = append(s.fields, listField{id: f.CustomFieldID, name: name})
		s.cols = append(s.cols, name)
	}
	return s, nil
}

func (s *listSource) Columns() []string { return append([]string(nil), s.cols...) }

func (s *listSource) Rows(ctx context.Context) iter.Seq2[Row, error] {
	return func(yield func(Row, error) bool) {
		listID := strconv.Itoa(s.listID)
		for sub, err := range s.api.Subscribers.BrowseIter(ctx, s.listID, sendloop.SubscriberBrowseParams{Concurrency: 2}) {
			if err != nil {
				yield(Row{}, fmt.Errorf("reading the members of list %d: %w", s.listID, err))
				return
			}
			values := make(map[string]string, len(s.cols))
			values[ListVarEmailAddress] = sub.EmailAddress
			values[ListVarSubscriberID] = strconv.Itoa(sub.SubscriberID)
			values[ListVarListID] = listID
			for _, f := range s.fields {
				values[f.name] = sub.CustomFields[f.id]
			}
			row := Row{Address: strings.TrimSpace(sub.EmailAddress), Values: values,
				Key:           fmt.Sprintf("list %d subscriber %d", s.listID, sub.SubscriberID),
				NotSubscribed: memberReason(stateOf(sub.SubscriptionStatus, sub.BounceType), sub.SubscriptionStatus, s.listID)}
			if row.Address == "" {
				row.Reject = fmt.Sprintf("subscriber %d has no address", sub.SubscriberID)
			}
			if !yield(row, nil) {
				return
			}
		}
	}
}
