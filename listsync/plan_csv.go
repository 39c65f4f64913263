package listsync

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
)

// planCSVHeader is the header of the file Plan.WriteCSV writes.
var planCSVHeader = []string{"action", "line", "email", "subscriber_id", "field", "field_id", "from", "to", "reason"}

// The actions of the file Plan.WriteCSV writes.
const (
	planActionAdd         = "add"
	planActionUpdate      = "update"
	planActionUnsubscribe = "unsubscribe"
	planActionReject      = "reject"
)

// WriteCSV writes the plan as CSV, the file of `sendloop sync --dry-run --plan`: a header,
// then one row per change, in the columns
//
//	action,line,email,subscriber_id,field,field_id,from,to,reason
//
// action is add, update, reject or unsubscribe. The rows of the source come first, in its
// order, then the unsubscriptions, in the order ToUnsubscribe yields them. An addition
// takes one row per field it sets (one row without a field when it sets none), an update
// one row per field it changes, a rejected row and an unsubscription one row each. line is
// the row's line (empty for an unsubscription); email is the address as the source gives
// it for an addition, as written for a rejected row (MappedRow.Raw), and as the list holds
// it for an update or an unsubscription; subscriber_id is the member's (update,
// unsubscription); field is the source's name for the custom field and field_id its ID;
// from is the member's value (update) and to the source's; reason says why a row is
// rejected, and is empty on the other rows. Empty cells are empty strings; values are
// written as they are, quoted as RFC 4180 says, line breaks included.
//
// Like Events, WriteCSV reads the source again: it fails when the source cannot be read,
// when a CSV file's size or modification time changed since it was opened, and when a row
// planned for a change or a rejection no longer holds what was planned for it (the source
// changed since the plan; plan again). It fails when ctx ends. On failure w may hold part of
// the file.
func (pl *Plan) WriteCSV(ctx context.Context, w io.Writer) error {
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	cw := csv.NewWriter(w)
	err := pl.writeCSV(ctx, cw)
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return err
}

func (pl *Plan) writeCSV(ctx context.Context, cw *csv.Writer) error {
	if err := cw.Write(planCSVHeader); err != nil {
		return err
	}
	// One reading for every kind, so that the rows keep the source's order.
	for ev, err := range pl.Events(ctx, EventAdd|EventUpdate|EventReject) {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if ev.planned != 0 {
			return fmt.Errorf("listsync: the source changed since the plan: line %d no longer holds what was planned for it; plan again", ev.Row.Line)
		}
		if err := pl.writeEvent(cw, ev); err != nil {
			return err
		}
	}
	for u, err := range pl.ToUnsubscribe() {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if err := cw.Write(planRecord(planActionUnsubscribe, 0, u.Email, u.SubscriberID, "", 0, "", "", "")); err != nil {
			return err
		}
	}
	return nil
}

// writeEvent writes the rows of a row of the source.
func (pl *Plan) writeEvent(cw *csv.Writer, ev Event) error {
	row := ev.Row
	switch ev.Kind {
	case EventReject:
		return cw.Write(planRecord(planActionReject, row.Line, row.Raw, 0, "", 0, "", "", ev.Reason))
	case EventUpdate:
		u := ev.Update
		for _, ch := range u.Changes {
			if err := cw.Write(planRecord(planActionUpdate, u.Line, u.Email, u.SubscriberID, ch.Header, ch.Field.ID, ch.From, ch.To, "")); err != nil {
				return err
			}
		}
		return nil
	}
	wrote := false
	for i, f := range pl.Mapping().Fields {
		if row.Values[i] == "" {
			continue // an empty cell is not sent for a new address
		}
		wrote = true
		if err := cw.Write(planRecord(planActionAdd, row.Line, row.Email, 0, f.Header, f.Field.ID, "", row.Values[i], "")); err != nil {
			return err
		}
	}
	if wrote {
		return nil
	}
	return cw.Write(planRecord(planActionAdd, row.Line, row.Email, 0, "", 0, "", "", ""))
}

// planRecord is a row of the plan's CSV; a zero line or ID is an empty cell.
func planRecord(action string, line int, email string, id int, field string, fieldID int, from, to, reason string) []string {
	cell := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	return []string{action, cell(line), email, cell(id), field, cell(fieldID), from, to, reason}
}
