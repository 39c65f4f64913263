package main

import (
	"context"
	_ "embed"
	"log"

	"github.com/go-sendloop/sendloop"
	"github.com/go-sendloop/sendloop/sendlooptest"
)

//go:embed export.json
var demoExport []byte

// demo starts a fake whose list 1 holds ten members with the fields First name and Plan, and
// returns its key, its URL and a function that stops it.
func demo(ctx context.Context) (key, url string, stop func()) {
	srv := sendlooptest.NewServer(nil)
	c, err := sendloop.NewClient(srv.APIKey, sendloop.WithBaseURL(srv.URL))
	if err == nil {
		_, err = c.Lists.Create(ctx, sendloop.ListCreateParams{Name: "Customers", OptInMode: sendloop.OptInSingle})
	}
	var members []sendloop.ImportSubscriber
	for i, name := range []string{"ann", "bob", "carol", "dan", "erin", "frank", "grace", "heidi", "ivan", "judy"} {
		if i < 2 && err == nil {
			_, err = srv.DefineCustomField(1, sendlooptest.CustomField{Name: []string{"First name", "Plan"}[i]})
		}
		members = append(members, sendloop.ImportSubscriber{EmailAddress: name + "@example.com", Fields: sendloop.CustomFields{2: "free"}})
	}
	if err == nil {
		_, err = c.Subscribers.Import(ctx, 1, sendloop.SubscriberImportParams{Subscribers: members})
	}
	if err != nil {
		log.Fatalf("seeding the fake: %v", err)
	}
	return srv.APIKey, srv.URL, srv.Close
}
