package smtp_test

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/emersion/go-message"

	"github.com/go-sendloop/sendloop/sendlooptest"
	"github.com/go-sendloop/sendloop/smtp"
)

func ExampleHeaders_Fields() {
	h := smtp.Headers{
		CustomArgs:  map[string]any{"user_id": "42", "campaign": "spring"},
		MergeVars:   map[string]any{"%FIRSTNAME%": "Zoë", "FIRSTNAME": "Zoë", "EMOJI": "😀"},
		Tags:        []string{"welcome", "été"},
		TrackOpens:  true,
		TrackClicks: true,
	}
	fields, err := h.Fields()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range fields {
		fmt.Printf("%s: %s\n", f.Name, f.Value)
	}
	// Output:
	// X-SL-Custom-Args: {"campaign":"spring","user_id":"42"}
	// X-SL-Merge-Vars: {"%FIRSTNAME%":"Zo\u00eb","EMOJI":"\ud83d\ude00","FIRSTNAME":"Zo\u00eb"}
	// X-SL-Tags: ["welcome","\u00e9t\u00e9"]
	// X-SL-Track-Opens: 1
	// X-SL-Track-Clicks: 1
}

// MergeVars fills both tag styles, %NAME% and {{NAME}}, from one value per name.
func ExampleMergeVars() {
	vars := smtp.MergeVars(map[string]string{"NAME": "Ann", "PLAN": "pro"})
	vars["VIP"] = true // a {{#VIP}} section: one key, added to the same map
	fields, err := smtp.Headers{MergeVars: vars}.Fields()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range fields {
		fmt.Printf("%s: %s\n", f.Name, f.Value)
	}
	// Output:
	// X-SL-Merge-Vars: {"%NAME%":"Ann","%PLAN%":"pro","NAME":"Ann","PLAN":"pro","VIP":true}
}

func ExampleParseHeaders() {
	msg, err := message.Read(strings.NewReader("" +
		"From: shop@example.com\r\n" +
		"X-SL-Tags: [\"welcome\",\"\\u00e9t\\u00e9\"]\r\n" +
		"X-SL-Track-Opens: Yes\r\n" +
		"X-SL-Track-Clicks: off\r\n" +
		"\r\n" +
		"Hello\r\n"))
	if err != nil {
		log.Fatal(err)
	}
	h, err := smtp.ParseHeaders(msg.Header.Map())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(h.Tags, h.TrackOpens, h.TrackClicks, h.TrackGA)

	_, err = smtp.ParseHeaders(map[string][]string{"X-SL-Track-GA": {"maybe"}})
	fmt.Println(err)
	// Output:
	// [welcome été] true false false
	// sendloop/smtp: header X-SL-Track-GA: invalid tracking value "maybe": want 1, true, on, yes, 0, false, off or no
}

func ExampleRelay_Send() {
	// A fake relay for the example; use the address and credentials of the
	// Sendloop settings instead.
	fake, err := sendlooptest.StartRelay(nil, "sender-1", "password-1")
	if err != nil {
		log.Fatal(err)
	}
	defer fake.Close()

	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "sender-1", Password: "password-1"},
		smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}))
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := relay.Send(ctx, &smtp.Message{
		From:      "Shop <shop@example.com>",
		To:        []string{"Zoë <zoe@example.net>"},
		Subject:   "Your order, %FIRSTNAME%",
		Text:      "Hi {{FIRSTNAME}}, order {{ORDER}} has shipped.",
		MessageID: "order-A-17@example.com",
		Headers: smtp.Headers{
			MergeVars:  smtp.MergeVars(map[string]string{"FIRSTNAME": "Zoë", "ORDER": "A-17"}),
			Tags:       []string{"shipping"},
			TrackOpens: true,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("message id:", res.MessageID)
	fmt.Println("reply code:", res.Reply.Code)

	captured := fake.Messages()[0]
	fmt.Println("to:", captured.EnvelopeTo)
	fmt.Println("subject:", captured.RenderedSubject)
	fmt.Println("text:", captured.RenderedText)
	fmt.Println("tags:", captured.SLHeaders.Tags, "opens:", captured.SLHeaders.TrackOpens)
	// The password never shows (the port is random, so it is masked here).
	fmt.Println("relay:", strings.Replace(relay.String(), fake.Addr(), "127.0.0.1:PORT", 1))
	// Output:
	// message id: <order-A-17@example.com>
	// reply code: 250
	// to: [zoe@example.net]
	// subject: Your order, Zoë
	// text: Hi Zoë, order A-17 has shipped.
	// tags: [shipping] opens: true
	// relay: smtp.Relay{addr=127.0.0.1:PORT username="sender-1" password=[REDACTED]}
}

func ExampleRelay_SendAll() {
	fake, err := sendlooptest.StartRelay(nil, "sender-1", "password-1")
	if err != nil {
		log.Fatal(err)
	}
	defer fake.Close()
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "sender-1", Password: "password-1"},
		smtp.WithTLSConfig(fake.ClientTLSConfig()), smtp.WithMaxConnections(2))
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()

	people := []struct{ name, email string }{
		{"Ann", "ann@example.net"}, {"Bob", "bob@example.net"}, {"Carl", "not an address"}, {"Dora", "dora@example.net"},
	}
	messages := func(yield func(*smtp.Message) bool) {
		for _, p := range people {
			msg := &smtp.Message{
				From:    "news@example.com",
				To:      []string{p.email},
				Subject: "News for %NAME%",
				Text:    "Hello {{NAME}}",
				Headers: smtp.Headers{MergeVars: smtp.MergeVars(map[string]string{"NAME": p.name})},
			}
			if !yield(msg) {
				return
			}
		}
	}
	// One result per message, in input order; a bad one does not stop the
	// others.
	for res := range relay.SendAll(context.Background(), messages) {
		if res.Err != nil {
			fmt.Println(res.Index, "failed:", errors.As(res.Err, new(*smtp.AddressError)))
			continue
		}
		fmt.Println(res.Index, "sent, reply", res.Reply.Code)
	}
	fmt.Println("connections:", fake.Connections() <= 2, "messages:", len(fake.Messages()))
	// Output:
	// 0 sent, reply 250
	// 1 sent, reply 250
	// 2 failed: true
	// 3 sent, reply 250
	// connections: true messages: 3
}

func ExampleMessage_listUnsubscribeAndInlineImage() {
	fake, err := sendlooptest.StartRelay(nil, "sender-1", "password-1")
	if err != nil {
		log.Fatal(err)
	}
	defer fake.Close()
	relay, err := smtp.NewRelay(fake.Addr(), smtp.Auth{Username: "sender-1", Password: "password-1"},
		smtp.WithTLSConfig(fake.ClientTLSConfig()))
	if err != nil {
		log.Fatal(err)
	}
	defer relay.Close()

	logo := []byte("\x89PNG\r\n\x1a\n...")
	_, err = relay.Send(context.Background(), &smtp.Message{
		From:    "news@example.com",
		To:      []string{"ann@example.net"},
		Subject: "Spring news",
		Text:    "Our spring news.",
		HTML:    `<p><img src="cid:logo@example.com" alt="logo"> Our spring news.</p>`,
		Inline:  []smtp.Inline{{ContentID: "logo@example.com", Filename: "logo.png", Data: logo}},
		ListUnsubscribe: []string{
			"https://example.com/unsubscribe?u=ann",
			"mailto:unsubscribe@example.com?subject=ann",
		},
		ListUnsubscribeOneClick: true,
		ExtraHeaders:            []smtp.Field{{Name: "X-Campaign", Value: "spring"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	m := fake.Messages()[0]
	fmt.Println(m.Structure)
	fmt.Println("List-Unsubscribe:", m.Header.Get("List-Unsubscribe"))
	fmt.Println("List-Unsubscribe-Post:", m.Header.Get("List-Unsubscribe-Post"))
	fmt.Println("X-Campaign:", m.Header.Get("X-Campaign"))
	fmt.Println("inline:", m.Inline[0].ContentID, m.Inline[0].ContentType, len(m.Inline[0].Data), "bytes")
	// Output:
	// multipart/alternative(text/plain, multipart/related(text/html, image/png))
	// List-Unsubscribe: <https://example.com/unsubscribe?u=ann>, <mailto:unsubscribe@example.com?subject=ann>
	// List-Unsubscribe-Post: List-Unsubscribe=One-Click
	// X-Campaign: spring
	// inline: logo@example.com image/png 11 bytes
}
