package sendloop

import (
	"context"
	"net/url"
	"strconv"

	"github.com/go-sendloop/sendloop/internal/commands"
	"github.com/go-sendloop/sendloop/internal/wire"
)

// SuppressionService reads and extends the suppression list (suppression.list.*).
type SuppressionService service

// GlobalSuppression is the ListID of entries that suppress an address in every list.
const GlobalSuppression = 0

// SuppressionEntry is an address that may not be mailed. Suppression.List fills
// EmailAddress, Suppression.Get fills ListID (0 for a global entry).
//
//sendloop:decode
type SuppressionEntry struct {
	SuppressionID int    // the entry's ID
	Type          string // e.g. "FBL Report"; other values are kept as they came
	EmailAddress  string // the suppressed address; in Suppression.List's entries
	// ListID is the list the entry suppresses the address in, GlobalSuppression (0) for
	// every list; in Suppression.Get's entries.
	ListID int
}

func decodeSuppressionEntries(v []byte) ([]SuppressionEntry, error) {
	return recordsFrom[SuppressionEntry](v)
}

// checkSuppressionListID allows 0, GlobalSuppression; an impossible ID is 118 here.
func checkSuppressionListID(command string, listID int) error {
	return idError(command, "ListID", listID, true, ErrListNotFound)
}

// List returns the entries of a list, or the global ones with GlobalSuppression
// (suppression.list.getlist).
func (s *SuppressionService) List(ctx context.Context, listID int) ([]SuppressionEntry, error) {
	const command = commands.SuppressionListGetList
	if err := checkSuppressionListID(command, listID); err != nil {
		return nil, err
	}
	var entries []SuppressionEntry
	err := s.client.do(ctx, &apiCall{command: command, form: listForm(listID)}, func(key, v []byte) (err error) {
		if string(key) == "SuppressionList" {
			entries, err = decodeSuppressionEntries(v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// Get returns the entries that suppress an address, in any list (suppression.list.get).
func (s *SuppressionService) Get(ctx context.Context, email string) ([]SuppressionEntry, error) {
	const command = commands.SuppressionListGet
	if err := checkEmail(command, "EmailAddress", email); err != nil {
		return nil, err
	}
	var entries []SuppressionEntry
	err := s.client.do(ctx, &apiCall{command: command, form: url.Values{"EmailAddress": {email}}}, func(key, v []byte) (err error) {
		if string(key) == "SuppressionItem" {
			entries, err = decodeSuppressionEntries(v)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// SuppressionAddParams are the parameters of Suppression.Add.
type SuppressionAddParams struct {
	// EmailAddress is the address to suppress (required).
	EmailAddress string
}

// validate requires a well-formed address.
func (p SuppressionAddParams) validate(command string) error {
	return checkEmail(command, "EmailAddress", p.EmailAddress)
}

// Add suppresses an address in a list, or everywhere with GlobalSuppression, and returns
// the new entry's ID (suppression.list.add). An answer without NewSuppressionID is a
// success with ID 0: the address is suppressed (an address suppressed before may be
// answered so), and unlike a create nothing depends on the ID.
func (s *SuppressionService) Add(ctx context.Context, listID int, p SuppressionAddParams) (int, error) {
	const command = commands.SuppressionListAdd
	if err := checkSuppressionListID(command, listID); err != nil {
		return 0, err
	}
	if err := p.validate(command); err != nil {
		return 0, err
	}
	form := url.Values{"ListID": {strconv.Itoa(listID)}, "EmailAddress": {p.EmailAddress}}
	id := 0
	err := s.client.do(ctx, &apiCall{command: command, form: form}, func(key, v []byte) (err error) {
		if string(key) == "NewSuppressionID" {
			id, err = wire.Int(v)
		}
		return err
	})
	if err != nil {
		return 0, err
	}
	return id, nil
}
