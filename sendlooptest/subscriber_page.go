package sendlooptest

import "strconv"

// subscriberPage is the Subscribers of a subscriber.browse answer. A re-sync reads a list
// of a million members in ten thousand pages, so a page is not made of objects: it holds
// copies of the records, taken under the server's lock, and appendJSON writes them straight
// into the answer. The copies may be read after the lock is released: a record's strings
// and its memberState are never written through (members.go), and the field IDs are the
// list's as they were.
type subscriberPage struct {
	fields []int        // the list's custom field IDs, in the list's order
	subs   []subscriber // the records, in browse order
}

// newSubscriberPage copies subs, the members of l to answer with.
func newSubscriberPage(l *list, subs []*subscriber) subscriberPage {
	p := subscriberPage{fields: make([]int, len(l.Fields)), subs: make([]subscriber, len(subs))}
	for i, f := range l.Fields {
		p.fields[i] = f.ID
	}
	for i, s := range subs {
		p.subs[i] = *s
	}
	return p
}

// objects returns the page as objects, for the encoders other than JSON's.
func (p subscriberPage) objects() []object {
	out := make([]object, len(p.subs))
	for i := range p.subs {
		out[i] = p.subs[i].record(p.fields)
	}
	return out
}

// appendJSON writes the page as appendJSON writes p.objects(), without making them: the
// member state's members, shared by most records of a page, are written once and copied.
func (p subscriberPage) appendJSON(b []byte) []byte {
	if len(p.subs) == 0 {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	var last *memberState
	var stateStart, stateEnd int
	for i := range p.subs {
		s := &p.subs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"SubscriberID":"`...)
		b = strconv.AppendInt(b, int64(s.ID), 10)
		b = append(b, `","EmailAddress":`...)
		b = appendJSONString(b, s.Email)
		if s.memberState == last {
			b = append(b, b[stateStart:stateEnd]...)
		} else {
			start := len(b)
			b = appendMemberStateJSON(b, s.memberState)
			last, stateStart, stateEnd = s.memberState, start, len(b)
		}
		for _, id := range p.fields {
			b = append(b, `,"CustomField`...)
			b = strconv.AppendInt(b, int64(id), 10)
			b = append(b, `":`...)
			b = appendJSONString(b, s.Fields.get(id))
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendMemberStateJSON writes the members of a record that come from its memberState, in
// record's order, each after a comma.
func appendMemberStateJSON(b []byte, ms *memberState) []byte {
	b = appendJSONString(append(b, `,"BounceType":`...), ms.BounceType)
	b = appendJSONString(append(b, `,"SubscriptionStatus":`...), ms.Status)
	b = appendJSONString(append(b, `,"SubscriptionDate":`...), ms.SubscriptionDate)
	b = appendJSONString(append(b, `,"SubscriptionIP":`...), ms.SubscriptionIP)
	b = appendJSONString(append(b, `,"UnsubscriptionDate":`...), ms.UnsubscriptionDate)
	b = appendJSONString(append(b, `,"UnsubscriptionIP":`...), ms.UnsubscriptionIP)
	return appendJSONString(append(b, `,"OptInDate":`...), ms.OptInDate)
}
