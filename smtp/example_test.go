package smtp_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"net/mail"
	"strings"
	"time"

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

func ExampleParseHeaders() {
	msg, err := mail.ReadMessage(strings.NewReader("" +
		"From: shop@example.com\r\n" +
		"X-SL-Tags: [\"welcome\",\"\\u00e9t\\u00e9\"]\r\n" +
		"X-SL-Track-Opens: Yes\r\n" +
		"X-SL-Track-Clicks: off\r\n" +
		"\r\n" +
		"Hello\r\n"))
	if err != nil {
		log.Fatal(err)
	}
	h, err := smtp.ParseHeaders(msg.Header)
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
	// A fake relay for the example; use the host, port and credentials of
	// the Sendloop settings instead.
	fake, err := sendlooptest.StartRelay(nil, "sender-1", "password-1")
	if err != nil {
		log.Fatal(err)
	}
	defer fake.Close()

	relay, err := smtp.NewRelay(fake.Host(), fake.Port(), "sender-1", "password-1",
		smtp.WithTLSConfig(&tls.Config{RootCAs: fake.RootCAs()}))
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = relay.Send(ctx, &smtp.Message{
		From:    "Shop <shop@example.com>",
		To:      []string{"Zoë <zoe@example.net>"},
		Subject: "Your order, %FIRSTNAME%",
		Text:    "Hi {{FIRSTNAME}}, order {{ORDER}} has shipped.",
		Headers: smtp.Headers{
			MergeVars:  map[string]any{"%FIRSTNAME%": "Zoë", "FIRSTNAME": "Zoë", "ORDER": "A-17"},
			Tags:       []string{"shipping"},
			TrackOpens: true,
		},
	})
	if err != nil {
		log.Fatal(err)
	}

	captured := fake.Messages()[0]
	fmt.Println("to:", captured.EnvelopeTo)
	fmt.Println("subject:", captured.RenderedSubject)
	fmt.Println("text:", captured.RenderedText)
	fmt.Println("tags:", captured.SLHeaders.Tags, "opens:", captured.SLHeaders.TrackOpens)
	// The password never shows (the port is random, so it is masked here).
	fmt.Println("relay:", strings.Replace(relay.String(), fake.Addr(), "127.0.0.1:PORT", 1))
	// Output:
	// to: [zoe@example.net]
	// subject: Your order, Zoë
	// text: Hi Zoë, order A-17 has shipped.
	// tags: [shipping] opens: true
	// relay: smtp.Relay{addr=127.0.0.1:PORT username="sender-1" password=[REDACTED]}
}
