package sendlooptest

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The subscription states and bounce types a seed may give, as the service spells them.
var (
	seedStatuses    = []string{statusSubscribed, statusPending, statusUnsubscribed}
	seedBounceTypes = []string{"Not Bounced", "Hard", "Soft"}
)

// LoadSeed adds seed's lists, custom fields, segments, subscribers and suppressions to the
// server (see Seed for the rules). It checks the whole seed first: on any fault it loads
// nothing and returns every fault (errors.Join of up to 20 *SeedError values, each naming
// its JSON path). It posts no webhook and sends no email.
func (s *Server) LoadSeed(seed Seed) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	plan, err := s.state.planSeed(seed)
	if err != nil {
		return err
	}
	s.state.applySeed(seed, plan, s.now())
	return nil
}

// seedPlan is what checking a seed decides: the IDs of the entries that gave none, and
// each subscriber's canonical values.
type seedPlan struct {
	listIDs     []int
	fieldIDs    [][]int
	segmentIDs  [][]int
	segFields   [][]int             // the custom field ID each segment tests
	members     [][]seedMember      // per list, per subscriber
	suppression [][]SeedSuppression // per list, with types defaulted; the last entry is the global one
}

type seedMember struct {
	status, bounce string
	fields         map[int]string
}

// seedChecker gathers the faults of a seed.
type seedChecker struct{ errs []error }

func (c *seedChecker) fail(path, format string, args ...any) {
	if len(c.errs) < maxSeedErrors {
		c.errs = append(c.errs, &SeedError{Path: path, Reason: fmt.Sprintf(format, args...)})
	}
}

// idAllocator hands out IDs: the given ones (checked for range and uniqueness), then, for
// entries without one, the smallest free ones.
type idAllocator struct {
	taken map[int]string // ID → who holds it, for the error
	next  int
}

func newIDAllocator() *idAllocator { return &idAllocator{taken: map[int]string{}} }

// claim records a given ID; it reports a fault when the ID is impossible or held.
func (a *idAllocator) claim(c *seedChecker, path string, id int) {
	switch holder, held := a.taken[id]; {
	case id < 0 || id > 2147483647:
		c.fail(path, "ID %d is not an ID: leave it out (or 0) to let the fake choose, or give 1 to 2147483647", id)
	case held:
		c.fail(path, "ID %d is taken by %s", id, holder)
	default:
		a.taken[id] = path
	}
}

// free returns the smallest ID nobody holds, and holds it.
func (a *idAllocator) free(path string) int {
	for {
		a.next++
		if _, held := a.taken[a.next]; !held {
			a.taken[a.next] = path
			return a.next
		}
	}
}

// planSeed checks seed against the state and decides its IDs.
func (st *state) planSeed(seed Seed) (*seedPlan, error) {
	var c seedChecker
	lists, fields, segments := newIDAllocator(), newIDAllocator(), newIDAllocator()
	for _, l := range st.lists.byID {
		lists.taken[l.ID] = "list " + strconv.Itoa(l.ID) + " of the server"
		for _, f := range l.Fields {
			fields.taken[f.ID] = "a custom field of the server's list " + strconv.Itoa(l.ID)
		}
		for id := range l.Segments {
			segments.taken[id] = "a segment of the server's list " + strconv.Itoa(l.ID)
		}
	}
	// Given IDs first, so that the chosen ones avoid every one of them.
	for i, l := range seed.Lists {
		p := "lists[" + strconv.Itoa(i) + "]"
		if l.ID != 0 {
			lists.claim(&c, p+".id", l.ID)
		}
		for j, f := range l.CustomFields {
			if f.ID != 0 {
				fields.claim(&c, p+".custom_fields["+strconv.Itoa(j)+"].id", f.ID)
			}
		}
		for j, g := range l.Segments {
			if g.ID != 0 {
				segments.claim(&c, p+".segments["+strconv.Itoa(j)+"].id", g.ID)
			}
		}
	}
	plan := &seedPlan{}
	for i, l := range seed.Lists {
		p := "lists[" + strconv.Itoa(i) + "]"
		id := l.ID
		if id == 0 {
			id = lists.free(p)
		}
		plan.listIDs = append(plan.listIDs, id)
		if strings.TrimSpace(l.Name) == "" {
			c.fail(p+".name", "a list needs a name")
		}
		if _, ok := optInMode(l.OptInMode); !ok && l.OptInMode != "" {
			c.fail(p+".opt_in_mode", "unknown opt-in mode %q: Single or Double", l.OptInMode)
		}
		byName, ids := st.planFields(&c, p, l, fields)
		plan.fieldIDs = append(plan.fieldIDs, ids)
		var segIDs, segFields []int
		for j, g := range l.Segments {
			gp := p + ".segments[" + strconv.Itoa(j) + "]"
			gid := g.ID
			if gid == 0 {
				gid = segments.free(gp)
			}
			segIDs = append(segIDs, gid)
			if strings.TrimSpace(g.Name) == "" {
				c.fail(gp+".name", "a segment needs a name")
			}
			fid, ok := byName[strings.ToLower(g.Field)]
			if !ok {
				c.fail(gp+".field", "no custom field %q in this list", g.Field)
			}
			segFields = append(segFields, fid)
		}
		plan.segmentIDs, plan.segFields = append(plan.segmentIDs, segIDs), append(plan.segFields, segFields)
		plan.members = append(plan.members, planMembers(&c, p, l.Subscribers, byName, ids))
		plan.suppression = append(plan.suppression, planSuppressions(&c, p+".suppressions", l.Suppressions))
	}
	plan.suppression = append(plan.suppression, planSuppressions(&c, "suppressions", seed.Suppressions))
	if len(c.errs) > 0 {
		return nil, errors.Join(c.errs...)
	}
	return plan, nil
}

// planFields checks a list's custom fields and returns their IDs, by lower-cased name too.
func (st *state) planFields(c *seedChecker, p string, l SeedList, fields *idAllocator) (map[string]int, []int) {
	byName := map[string]int{}
	ids := make([]int, 0, len(l.CustomFields))
	for j, f := range l.CustomFields {
		fp := p + ".custom_fields[" + strconv.Itoa(j) + "]"
		fid := f.ID
		if fid == 0 {
			fid = fields.free(fp)
		}
		ids = append(ids, fid)
		key := strings.ToLower(strings.TrimSpace(f.Name))
		switch _, dup := byName[key]; {
		case key == "":
			c.fail(fp+".name", "a custom field needs a name")
		case dup:
			c.fail(fp+".name", "the list has another custom field named %q", f.Name)
		default:
			byName[key] = fid
		}
	}
	return byName, ids
}

// planMembers checks a list's subscribers.
func planMembers(c *seedChecker, p string, subs []SeedSubscriber, byName map[string]int, fieldIDs []int) []seedMember {
	seen := map[string]int{}
	out := make([]seedMember, 0, len(subs))
	for k, sub := range subs {
		sp := p + ".subscribers[" + strconv.Itoa(k) + "]"
		email := strings.TrimSpace(sub.Email)
		switch first, dup := seen[emailKey(email)]; {
		case email == "":
			c.fail(sp+".email", "a subscriber needs an address")
		case !validEmail(email):
			c.fail(sp+".email", "%q is not an address the service accepts", sub.Email)
		case dup:
			c.fail(sp+".email", "%s is already subscribers[%d] of this list", email, first)
		default:
			seen[emailKey(email)] = k
		}
		m := seedMember{status: statusSubscribed, bounce: "Not Bounced", fields: map[int]string{}}
		if sub.Status != "" {
			if m.status = canonical(sub.Status, seedStatuses); m.status == "" {
				c.fail(sp+".status", "unknown status %q: Subscribed, Confirmation Pending or Unsubscribed", sub.Status)
			}
		}
		if sub.BounceType != "" {
			if m.bounce = canonical(sub.BounceType, seedBounceTypes); m.bounce == "" {
				c.fail(sp+".bounce_type", "unknown bounce type %q: Not Bounced, Hard or Soft", sub.BounceType)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(sub.Fields)) {
			v := sub.Fields[name]
			id, ok := fieldByKey(name, byName, fieldIDs)
			if !ok {
				c.fail(sp+".fields["+strconv.Quote(name)+"]", "no custom field %q in this list", name)
				continue
			}
			if _, twice := m.fields[id]; twice {
				c.fail(sp+".fields["+strconv.Quote(name)+"]", "custom field %d is given twice", id)
			}
			m.fields[id] = v
		}
		out = append(out, m)
	}
	return out
}

// fieldByKey finds a custom field by name (any case) or as CustomField<id>.
func fieldByKey(key string, byName map[string]int, ids []int) (int, bool) {
	if id, ok := byName[strings.ToLower(strings.TrimSpace(key))]; ok {
		return id, true
	}
	if text, ok := strings.CutPrefix(key, "CustomField"); ok {
		if id, err := strconv.Atoi(text); err == nil {
			for _, fid := range ids {
				if fid == id {
					return id, true
				}
			}
		}
	}
	return 0, false
}

func planSuppressions(c *seedChecker, p string, entries []SeedSuppression) []SeedSuppression {
	out := make([]SeedSuppression, 0, len(entries))
	for k, e := range entries {
		ep := p + "[" + strconv.Itoa(k) + "]"
		e.Email = strings.TrimSpace(e.Email)
		if e.Email == "" {
			c.fail(ep+".email", "a suppression needs an address")
		} else if !validEmail(e.Email) {
			c.fail(ep+".email", "%q is not an address the service accepts", e.Email)
		}
		if strings.TrimSpace(e.Type) == "" {
			e.Type = "Manual"
		}
		out = append(out, e)
	}
	return out
}

// canonical returns the one of known that v spells in any case, or "".
func canonical(v string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(strings.TrimSpace(v), k) {
			return k
		}
	}
	return ""
}

// applySeed loads a checked seed.
func (st *state) applySeed(seed Seed, plan *seedPlan, now time.Time) {
	today := st.day(now)
	ls := &st.lists
	if ls.byID == nil {
		ls.byID = map[int]*list{}
	}
	for i, sl := range seed.Lists {
		mode := "Single"
		if m, ok := optInMode(sl.OptInMode); ok {
			mode = m
		}
		l := &list{ID: plan.listIDs[i], Name: sl.Name, OptInMode: mode, OptOutScope: "This list",
			CreatedOn: now.Format(dateTimeLayout), Settings: defaultSettings(sl.Name, st.account),
			Segments: map[int]*segment{}, byEmail: map[string]*subscriber{}}
		ls.byID[l.ID] = l
		ls.nextID = max(ls.nextID, l.ID)
		for j, f := range sl.CustomFields {
			cf := &customField{ID: plan.fieldIDs[i][j], FieldName: strings.TrimSpace(f.Name), FieldType: f.Type,
				FieldDataType: f.DataType, FieldDefaultValue: f.DefaultValue, FieldOptions: f.Options}
			if cf.FieldType == "" {
				cf.FieldType = "Single line"
			}
			if cf.FieldDataType == "" {
				cf.FieldDataType = "Text"
			}
			l.Fields = append(l.Fields, cf)
			ls.nextFieldID = max(ls.nextFieldID, cf.ID)
		}
		for j, g := range sl.Segments {
			l.Segments[plan.segmentIDs[i][j]] = &segment{ID: plan.segmentIDs[i][j], Name: g.Name, FieldID: plan.segFields[i][j], Value: g.Value}
			ls.nextSegID = max(ls.nextSegID, plan.segmentIDs[i][j])
		}
		for k, sub := range sl.Subscribers {
			m := plan.members[i][k]
			ms := memberState{Status: m.status, BounceType: m.bounce, SubscriptionDate: today, SubscriptionIP: "0.0.0.0",
				UnsubscriptionDate: zeroDate, UnsubscriptionIP: "0.0.0.0", OptInDate: today}
			switch m.status {
			case statusPending:
				ms.OptInDate = zeroDate
			case statusUnsubscribed:
				ms.UnsubscriptionDate = today
			}
			st.nextSubscriberID++
			s := st.newSubscriber()
			s.ID, s.list, s.Email = st.nextSubscriberID, l, strings.TrimSpace(sub.Email)
			s.Fields = packFields(m.fields)
			s.memberState = st.intern(ms)
			l.members = append(l.members, s)
			l.byEmail[emailKey(s.Email)] = s
		}
		l.changes++
		for _, e := range plan.suppression[i] {
			st.suppress(l.ID, e.Email, e.Type)
		}
	}
	for _, e := range plan.suppression[len(plan.suppression)-1] {
		st.suppress(0, e.Email, e.Type)
	}
}
