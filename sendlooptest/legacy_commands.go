package sendlooptest

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// legacyStatus spells a subscription state as the legacy API does.
func legacyStatus(status string) string {
	if status == statusPending {
		return "Waiting For Opt-In Confirmation"
	}
	return status
}

func legacySubscriberAdd(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	email, f := c.email("Fields[EmailAddress]")
	if f != nil {
		return nil, f
	}
	ip, f := c.required("SubscriptionIP")
	if f != nil {
		return nil, f
	}
	fields, f := c.fields()
	if f != nil {
		return nil, f
	}
	s, fl := c.st.subscribe(l, email, ip, fields, c.now, false)
	if fl != ok {
		return nil, fl.legacy()
	}
	return object{{"Status", legacyStatus(s.Status)}, {"SubscriberID", strconv.Itoa(s.ID)},
		{"RedirectURL", c.srv.URL + "/subscribe/" + strconv.Itoa(l.ID) + "/thanks"}}, nil
}

func legacySubscriberUnsubscribe(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	email, f := c.email("EmailAddress")
	if f != nil {
		return nil, f
	}
	ip, f := c.required("UnsubscriptionIP")
	if f != nil {
		return nil, f
	}
	if _, fl := c.st.unsubscribe(l, email, ip, c.now); fl != ok {
		return nil, fl.legacy()
	}
	return object{{"Status", statusUnsubscribed},
		{"RedirectURL", c.srv.URL + "/unsubscribe/" + strconv.Itoa(l.ID) + "/thanks"}}, nil
}

// member finds the subscriber named by EmailAddress: 4, 5, or 8 when the list lacks it.
func (c *legacyCall) member(l *list) (*subscriber, *legacyFailure) {
	email, f := c.email("EmailAddress")
	if f != nil {
		return nil, f
	}
	s := l.member(email)
	if s == nil {
		return nil, legacyError(8)
	}
	return s, nil
}

// legacyRecord is a subscriber record with the legacy spelling of its state.
func legacyRecord(s *subscriber) object {
	o := s.object()
	for i := range o {
		if o[i].Key == "SubscriptionStatus" {
			o[i].Value = legacyStatus(s.Status)
		}
	}
	return o
}

func legacySubscriberGet(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	s, f := c.member(l)
	if f != nil {
		return nil, f
	}
	return legacyRecord(s), nil
}

func legacySubscribersGet(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	records := make([]object, 0, len(l.members))
	for _, s := range l.members {
		records = append(records, legacyRecord(s))
	}
	return object{{"Subscribers", records}}, nil
}

func legacySubscriberUpdate(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	s, f := c.member(l)
	if f != nil {
		return nil, f
	}
	fields, f := c.fields()
	if f != nil {
		return nil, f
	}
	if fl := l.checkFields(fields); fl != ok {
		return nil, fl.legacy()
	}
	s.setFields(fields)
	return object{{"Status", "Completed"}, {"SubscriberID", strconv.Itoa(s.ID)}}, nil
}

func legacySubscriberDelete(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	s, f := c.member(l)
	if f != nil {
		return nil, f
	}
	l.members = slices.DeleteFunc(l.members, func(m *subscriber) bool { return m == s })
	l.changes++
	delete(l.byEmail, emailKey(s.Email))
	return object{{"Status", "Completed"}}, nil
}

func legacyChartListActivity(c *legacyCall) (object, *legacyFailure) {
	l, f := c.list()
	if f != nil {
		return nil, f
	}
	startText, f := c.required("Start")
	if f != nil {
		return nil, f
	}
	start, err := time.Parse(dateLayout, startText)
	if err != nil {
		return nil, legacyFault(faultBadParams, "Start must be a date YYYY-MM-DD")
	}
	daysText, f := c.required("Days")
	if f != nil {
		return nil, f
	}
	days, err := strconv.Atoi(daysText)
	if err != nil || days < 1 || days > maxLegacyDays {
		return nil, legacyFault(faultBadParams, "Days must be a whole number from 1 to %d", maxLegacyDays)
	}
	return object{{"Chart", listActivityChart(l, start, days)}}, nil
}

// listActivityChart draws the subscriptions and unsubscriptions recorded per day. A
// subscriber record keeps its latest subscription and unsubscription dates only, so an
// address that came back counts on the day it last subscribed.
func listActivityChart(l *list, start time.Time, days int) string {
	subs, unsubs := map[string]int{}, map[string]int{}
	for _, s := range l.members {
		subs[s.SubscriptionDate]++
		if s.UnsubscriptionDate != zeroDate {
			unsubs[s.UnsubscriptionDate]++
		}
	}
	labels := make([]string, days)
	for i := range labels {
		labels[i] = start.AddDate(0, 0, i).Format(dateLayout)
	}
	var b bytes.Buffer
	b.WriteString("<data><tooltip>")
	xmlText(&b, fmt.Sprintf("Activity of list %s from %s, %d days", l.Name, labels[0], days))
	b.WriteString("</tooltip><xaxis>")
	for _, day := range labels {
		b.WriteString("<xaxislabel>" + day + "</xaxislabel>")
	}
	b.WriteString("</xaxis><yaxis>Subscribers</yaxis><series>")
	for _, set := range []struct {
		label, noun string
		counts      map[string]int
	}{{"Subscription", "subscription", subs}, {"Unsubscription", "unsubscription", unsubs}} {
		b.WriteString(`<set label="` + set.label + `">`)
		for _, day := range labels {
			n := set.counts[day]
			noun := set.noun
			if n != 1 {
				noun += "s"
			}
			fmt.Fprintf(&b, "<serie><value>%d</value><tooltip>%d %s on %s</tooltip></serie>", n, n, noun, day)
		}
		b.WriteString("</set>")
	}
	b.WriteString("</series></data>")
	return b.String()
}

// mediaLibrary is the account's media library, kept for the legacy Media commands.
type mediaLibrary struct {
	items   []*mediaItem
	nextID  int
	maxSize int64 // 0: DefaultMaxMediaSize
}

type mediaItem struct {
	ID       int
	Type     string
	Data     []byte
	Tags     []string
	Uploaded time.Time
}

func (s *Server) mediaURL(m *mediaItem) string {
	return s.URL + "/media/" + strconv.Itoa(m.ID) + "." + mediaExtension(m.Type)
}

// mediaExtension names the file extension of an image type.
func mediaExtension(mediaType string) string {
	sub := strings.TrimPrefix(mediaType, "image/")
	switch sub {
	case "jpeg", "pjpeg":
		return "jpg"
	case "svg+xml":
		return "svg"
	case "x-icon", "vnd.microsoft.icon":
		return "ico"
	}
	ext := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, sub)
	if ext == "" {
		return "img"
	}
	return ext
}

func legacyMediaUpload(c *legacyCall) (object, *legacyFailure) {
	if _, f := c.required("MediaData"); f != nil {
		return nil, f
	}
	// Line breaks are dropped; spaces are '+' signs that a form decoder turned into spaces
	// (untrimmed: the last character may be one).
	raw := c.params.Get("MediaData")
	clean := strings.Map(func(r rune) rune {
		switch r {
		case '\r', '\n', '\t':
			return -1
		case ' ':
			return '+'
		}
		return r
	}, raw)
	data, err := base64.StdEncoding.DecodeString(clean)
	if err != nil || len(data) == 0 {
		return nil, legacyFault(faultBadParams, "MediaData is not base64")
	}
	typeText, f := c.required("MediaType")
	if f != nil {
		return nil, f
	}
	mt, _, err := mime.ParseMediaType(typeText)
	if err != nil || !strings.HasPrefix(mt, "image/") || mt == "image/" {
		return nil, legacyFault(faultBadParams, "MediaType must be an image type")
	}
	lib := &c.st.media
	limit := lib.maxSize
	if limit <= 0 {
		limit = DefaultMaxMediaSize
	}
	if int64(len(data)) > limit {
		return nil, legacyError(9)
	}
	var tags []string
	for _, t := range strings.Split(c.params.Get("Tags"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	lib.nextID++
	item := &mediaItem{ID: lib.nextID, Type: mt, Data: data, Tags: tags, Uploaded: c.now}
	lib.items = append(lib.items, item)
	return object{{"Status", "Completed"}, {"MediaID", strconv.Itoa(item.ID)}}, nil
}

func legacyMediaBrowse(c *legacyCall) (object, *legacyFailure) {
	out := object{{"Status", "Completed"}}
	for i, m := range c.st.media.items {
		out = append(out, member{"MediaURL" + strconv.Itoa(i+1), c.srv.mediaURL(m)})
	}
	return out, nil
}

// SetMaxMediaSize sets the largest image, in bytes, that Media.Upload stores; larger ones
// get legacy error 9. n <= 0 restores DefaultMaxMediaSize.
func (s *Server) SetMaxMediaSize(n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state.media.maxSize = max(n, 0)
}

// MediaItem is an image of the media library.
type MediaItem struct {
	ID        int       // the MediaID Media.Upload answered, from 1
	URL       string    // under the server's URL; the fake does not serve it
	MediaType string    // the MediaType sent, as a bare media type: parameters dropped, lower case
	Data      []byte    // the image: MediaData decoded from base64
	Tags      []string  // the Tags sent, split at commas and trimmed, empty ones dropped
	Uploaded  time.Time // when it was uploaded, by the fake's clock
}

// MediaItems returns the media library, oldest first.
func (s *Server) MediaItems() []MediaItem {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]MediaItem, 0, len(s.state.media.items))
	for _, m := range s.state.media.items {
		out = append(out, MediaItem{ID: m.ID, URL: s.mediaURL(m), MediaType: m.Type,
			Data: slices.Clone(m.Data), Tags: slices.Clone(m.Tags), Uploaded: m.Uploaded})
	}
	return out
}
