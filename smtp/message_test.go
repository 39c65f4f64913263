package smtp_test

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/go-sendloop/sendloop/smtp"
)

var testDate = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

// leaf is a non-multipart part of a parsed message.
type leaf struct {
	mediaType, disposition, filename, contentID string
	data                                        []byte
}

// parsed is a message built by Bytes and read back with go-message.
type parsed struct {
	header    mail.Header
	structure string
	leaves    []leaf
	raw       []byte
}

func buildMessage(t *testing.T, m *smtp.Message) parsed {
	t.Helper()
	raw, err := m.Bytes()
	if err != nil {
		t.Fatalf("Bytes: %v", err)
	}
	checkLines(t, raw)
	entity, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("go-message cannot read the message: %v\n%s", err, raw)
	}
	p := parsed{header: mail.Header{Header: entity.Header}, raw: raw}
	p.structure = walk(t, entity, &p.leaves)
	return p
}

func walk(t *testing.T, e *message.Entity, leaves *[]leaf) string {
	t.Helper()
	mediaType, params, err := e.Header.ContentType()
	if err != nil {
		t.Fatalf("Content-Type %q: %v", e.Header.Get("Content-Type"), err)
	}
	if mr := e.MultipartReader(); mr != nil {
		var children []string
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			children = append(children, walk(t, part, leaves))
		}
		return mediaType + "(" + strings.Join(children, ", ") + ")"
	}
	disposition, dispParams, _ := e.Header.ContentDisposition()
	if disposition == "" && strings.HasPrefix(mediaType, "text/") && params["charset"] != "utf-8" {
		t.Errorf("%s body part has charset %q", mediaType, params["charset"])
	}
	data, err := io.ReadAll(e.Body)
	if err != nil {
		t.Fatalf("%s body: %v", mediaType, err)
	}
	*leaves = append(*leaves, leaf{mediaType: mediaType, disposition: disposition, filename: dispParams["filename"],
		contentID: e.Header.Get("Content-Id"), data: data})
	return mediaType
}

// checkLines checks CRLF line endings and line lengths: at most 998
// characters, and 78 for all but a first header line holding one long
// encoded-word.
func checkLines(t *testing.T, raw []byte) {
	t.Helper()
	if !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Errorf("message does not end with CRLF")
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.ContainsAny(line, "\r\n") {
			t.Errorf("line %d has a bare CR or LF: %q", i+1, line)
		}
		limit := 78
		if bytes.Contains(line, []byte(": =?utf-8?")) || bytes.HasPrefix(line, []byte("X-SL-")) || bytes.HasPrefix(line, []byte(" \"")) {
			limit = 998
		}
		if len(line) > limit {
			t.Errorf("line %d is %d characters long: %q", i+1, len(line), line)
		}
	}
}

func TestMessageTextOnly(t *testing.T) {
	t.Parallel()
	p := buildMessage(t, &smtp.Message{
		From:      "Ann Lee <ann@example.com>",
		To:        []string{"bob@example.net", "Carl <carl@example.net>"},
		Cc:        []string{"dora@example.org"},
		Bcc:       []string{"secret@example.org"},
		ReplyTo:   "replies@example.com",
		Subject:   "Hello there",
		Text:      "Hi Bob,\nsee you =soon=.\n" + strings.Repeat("long ", 40) + "\n",
		Date:      testDate,
		MessageID: "abc@example.com",
	})
	for name, want := range map[string]string{
		"From":                      `"Ann Lee" <ann@example.com>`,
		"To":                        `<bob@example.net>, "Carl" <carl@example.net>`,
		"Cc":                        "<dora@example.org>",
		"Reply-To":                  "<replies@example.com>",
		"Subject":                   "Hello there",
		"Date":                      "Mon, 06 May 2024 07:08:09 +0000",
		"Message-Id":                "<abc@example.com>",
		"Mime-Version":              "1.0",
		"Content-Type":              "text/plain; charset=utf-8",
		"Content-Transfer-Encoding": "quoted-printable",
	} {
		if got := p.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	// Bcc: the recipients get the message; the header never names them.
	if bytes.Contains(p.raw, []byte("secret@")) || p.header.Has("Bcc") {
		t.Errorf("Bcc leaked into the message:\n%s", p.raw)
	}
	if p.structure != "text/plain" || string(p.leaves[0].data) != "Hi Bob,\r\nsee you =soon=.\r\n"+strings.Repeat("long ", 40)+"\r\n" {
		t.Errorf("structure %s, body %q", p.structure, p.leaves[0].data)
	}
	if !bytes.HasPrefix(p.raw, []byte("From: ")) {
		t.Errorf("header order: the message starts %q", p.raw[:30])
	}
}

func TestMessageNonASCIIHeaders(t *testing.T) {
	t.Parallel()
	subjects := []string{
		"Bonjour Zoë, ça va ?",
		"日本語の件名はとても長いのでいくつかのエンコードされた単語に分割されなければなりません",
		"Emoji 😀 " + strings.Repeat("word ", 30),
		strings.Repeat("a", 60) + " " + strings.Repeat("b", 60) + " ?= =?x",
	}
	for _, subject := range subjects {
		p := buildMessage(t, &smtp.Message{
			From:         "Zoë Ærø <zoe@example.com>",
			To:           []string{"José <jose@example.net>"},
			Subject:      subject,
			Text:         "x",
			ExtraHeaders: []smtp.Field{{Name: "X-Campaign-Name", Value: "Été " + subject}},
		})
		if got, err := p.header.Subject(); err != nil || got != subject {
			t.Errorf("subject decodes to %q (%v), want %q", got, err, subject)
		}
		if got, err := p.header.Text("X-Campaign-Name"); err != nil || got != "Été "+subject {
			t.Errorf("X-Campaign-Name decodes to %q (%v)", got, err)
		}
		if raw := p.header.Get("X-Campaign-Name"); !strings.HasPrefix(raw, "=?utf-8?") {
			t.Errorf("X-Campaign-Name is not an encoded-word: %q", raw)
		}
		from, err := p.header.AddressList("From")
		if err != nil || from[0].Name != "Zoë Ærø" || from[0].Address != "zoe@example.com" {
			t.Errorf("From = %v (%v)", from, err)
		}
		to, err := p.header.AddressList("To")
		if err != nil || to[0].Name != "José" {
			t.Errorf("To = %v (%v)", to, err)
		}
	}
}

func TestMessageStructure(t *testing.T) {
	t.Parallel()
	logo := smtp.Inline{ContentID: "<logo@example.com>", Filename: "logo.png", Data: []byte("\x89PNG\r\n\x1a\n")}
	chart := smtp.Inline{ContentID: "chart@example.com", ContentType: "image/svg+xml", Data: []byte("<svg/>")}
	files := []smtp.Attachment{
		{Filename: "report.pdf", Data: bytes.Repeat([]byte{0, 1, 2, 255}, 100)},
		{Filename: "données été.csv", ContentType: "text/csv", Data: []byte("a,b\n")},
		{Filename: "noext", Data: []byte("x")},
	}
	tests := []struct {
		name      string
		msg       smtp.Message
		want      string
		wantFiles int
	}{
		{"text only", smtp.Message{Text: "Hi"}, "text/plain", 0},
		{"html only", smtp.Message{HTML: "<p>Hi</p>"}, "text/html", 0},
		{"text and html", smtp.Message{Text: "Hi", HTML: "<p>Hi</p>"}, "multipart/alternative(text/plain, text/html)", 0},
		{"html and inline", smtp.Message{HTML: `<img src="cid:logo@example.com">`, Inline: []smtp.Inline{logo}},
			"multipart/related(text/html, image/png)", 0},
		{"text, html and inline", smtp.Message{Text: "Hi", HTML: `<img src="cid:logo@example.com"><img src="cid:chart@example.com">`, Inline: []smtp.Inline{logo, chart}},
			"multipart/alternative(text/plain, multipart/related(text/html, image/png, image/svg+xml))", 0},
		{"text, html and attachments", smtp.Message{Text: "Hi", HTML: "<p>Hi</p>", Attachments: files},
			"multipart/mixed(multipart/alternative(text/plain, text/html), application/pdf, text/csv, application/octet-stream)", 3},
		{"everything", smtp.Message{Text: "Hi", HTML: `<img src="cid:logo@example.com">`, Inline: []smtp.Inline{logo}, Attachments: files[:1]},
			"multipart/mixed(multipart/alternative(text/plain, multipart/related(text/html, image/png)), application/pdf)", 1},
		{"inline named by its file", smtp.Message{HTML: `<img src="cid:logo.png">`, Inline: []smtp.Inline{{ContentID: "logo.png", Filename: "logo.png", Data: []byte("\x89PNG")}}},
			"multipart/related(text/html, image/png)", 0},
		{"text and attachment", smtp.Message{Text: "Hi", Attachments: []smtp.Attachment{{Filename: "a.txt", Data: []byte("x")}}},
			"multipart/mixed(text/plain, text/plain)", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := tt.msg
			m.From, m.To = "a@example.com", []string{"b@example.com"}
			p := buildMessage(t, &m)
			if p.structure != tt.want {
				t.Errorf("structure = %s, want %s", p.structure, tt.want)
			}
			var gotFiles []leaf
			var gotInline []leaf
			for _, l := range p.leaves {
				switch l.disposition {
				case "attachment":
					gotFiles = append(gotFiles, l)
				case "inline":
					gotInline = append(gotInline, l)
				}
			}
			if len(gotFiles) != tt.wantFiles {
				t.Fatalf("%d attachments, want %d", len(gotFiles), tt.wantFiles)
			}
			for i, f := range gotFiles {
				if a := m.Attachments[i]; f.filename != a.Filename || !bytes.Equal(f.data, a.Data) {
					t.Errorf("attachment %d = %q %q, want %q", i, f.filename, f.data, a.Filename)
				}
			}
			if len(gotInline) != len(m.Inline) {
				t.Fatalf("%d inline parts, want %d", len(gotInline), len(m.Inline))
			}
			for i, in := range gotInline {
				want := "<" + strings.Trim(m.Inline[i].ContentID, "<>") + ">"
				if in.contentID != want || !bytes.Equal(in.data, m.Inline[i].Data) || in.filename != m.Inline[i].Filename {
					t.Errorf("inline %d = %+v, want Content-ID %s", i, in, want)
				}
			}
			if m.Text != "" && (p.leaves[0].mediaType != "text/plain" || string(p.leaves[0].data) != m.Text) {
				t.Errorf("first part = %s %q, want the text", p.leaves[0].mediaType, p.leaves[0].data)
			}
		})
	}
}

func TestMessageListUnsubscribeNonASCII(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		uris []string
		want string
	}{
		{"query", []string{"https://example.com/u?e=Zoë"}, "<https://example.com/u?e=Zo%C3%AB>"},
		{"path and already encoded", []string{"https://example.com/désinscrire/a%20b"}, "<https://example.com/d%C3%A9sinscrire/a%20b>"},
		{"emoji", []string{"https://example.com/u?t=😀"}, "<https://example.com/u?t=%F0%9F%98%80>"},
		{"mailto subject", []string{"mailto:leave@example.com?subject=désabonner"}, "<mailto:leave@example.com?subject=d%C3%A9sabonner>"},
		{"ASCII unchanged", []string{"https://example.com/u?id=1"}, "<https://example.com/u?id=1>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := buildMessage(t, &smtp.Message{From: "news@example.com", To: []string{"ann@example.net"}, Text: "x", ListUnsubscribe: tt.uris})
			if got := p.header.Get("List-Unsubscribe"); got != tt.want {
				t.Errorf("List-Unsubscribe = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMessageExtraHeaders(t *testing.T) {
	t.Parallel()
	p := buildMessage(t, &smtp.Message{
		From: "news@example.com", To: []string{"ann@example.net"}, Subject: "News", Text: "x",
		ListUnsubscribe:         []string{"https://example.com/u?id=1&l=2", "mailto:leave@example.com?subject=unsubscribe"},
		ListUnsubscribeOneClick: true,
		ExtraHeaders: []smtp.Field{
			{Name: "In-Reply-To", Value: "<a1@example.com>"},
			{Name: "References", Value: "<a0@example.com> <a1@example.com>"},
			{Name: "x-mailer-ref", Value: "batch 7"},
			{Name: "X-Tracking", Value: "a"},
			{Name: "X-Tracking", Value: "b"},
		},
		Headers: smtp.Headers{Tags: []string{"news"}},
	})
	for name, want := range map[string]string{
		"List-Unsubscribe":      "<https://example.com/u?id=1&l=2>, <mailto:leave@example.com?subject=unsubscribe>",
		"List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
		"In-Reply-To":           "<a1@example.com>",
		"X-Mailer-Ref":          "batch 7",
		"X-Sl-Tags":             `["news"]`,
	} {
		if got := p.header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if refs, err := p.header.MsgIDList("References"); err != nil || !reflect.DeepEqual(refs, []string{"a0@example.com", "a1@example.com"}) {
		t.Errorf("References = %v (%v)", refs, err)
	}
	if got := p.header.Values("X-Tracking"); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("X-Tracking = %v, want both values in order", got)
	}
	if id, err := p.header.MessageID(); err != nil || !strings.HasSuffix(id, "@example.com") || len(id) < 20 {
		t.Errorf("generated Message-ID = %q (%v)", id, err)
	}
}

func TestMessageIDsAreUnique(t *testing.T) {
	t.Parallel()
	m := &smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Text: "x"}
	seen := map[string]bool{}
	for i := 0; i < 50; i++ {
		p := buildMessage(t, m)
		id, err := p.header.MessageID()
		if err != nil || seen[id] {
			t.Fatalf("Message-ID %q repeated or invalid (%v)", id, err)
		}
		seen[id] = true
	}
}

func TestMessageXSLHeaders(t *testing.T) {
	t.Parallel()
	headers := smtp.Headers{
		CustomArgs: map[string]any{"user": "42"},
		MergeVars: map[string]any{
			"%LONG%": strings.Repeat("é", 100),
			"%A%":    "1", "%B%": "2", "%C%": strings.Repeat("x", 60), "%D%": "4",
		},
		Tags:        []string{"welcome"},
		TrackOpens:  true,
		TrackClicks: true,
	}
	p := buildMessage(t, &smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Text: "x", Headers: headers})
	got, err := smtp.ParseHeaders(p.header.Map())
	if err != nil {
		t.Fatal(err)
	}
	want := headers
	want.MergeVars = map[string]any{}
	for k, v := range headers.MergeVars {
		want.MergeVars[k] = v
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("X-SL headers:\n got %#v\nwant %#v", got, want)
	}
	if !bytes.Contains(p.raw, []byte("X-SL-Merge-Vars: ")) || !bytes.Contains(p.raw, []byte("X-SL-Track-Opens: 1\r\n")) {
		t.Errorf("headers not spelled as documented:\n%s", p.raw)
	}
	// ASCII JSON: no encoded-words, \uXXXX escapes.
	if bytes.Contains(p.raw, []byte("X-SL-Merge-Vars: =?")) || !bytes.Contains(p.raw, []byte(`\u00e9`)) {
		t.Errorf("X-SL-Merge-Vars is not ASCII JSON:\n%s", p.raw)
	}
}

func TestMessageLongJSONString(t *testing.T) {
	t.Parallel()
	m := &smtp.Message{From: "a@example.com", To: []string{"b@example.com"},
		Headers: smtp.Headers{MergeVars: map[string]any{"%X%": strings.Repeat("y", 1000)}}}
	_, err := m.Bytes()
	if !errors.Is(err, smtp.ErrLineTooLong) {
		t.Fatalf("err = %v, want ErrLineTooLong", err)
	}
}

func TestMessageRaw(t *testing.T) {
	t.Parallel()
	const raw = "From: a@example.com\r\nTo: b@example.com\r\nSubject: raw\r\nMessage-ID: <raw-1@example.com>\r\nX-SL-Tags: [\"own\"]\r\n\r\nbody\r\n"
	noID := strings.Replace(raw, "Message-ID: <raw-1@example.com>\r\n", "", 1)
	tests := []struct {
		name    string
		msg     smtp.Message
		want    smtp.Headers
		wantErr error
	}{
		{"adds headers", smtp.Message{Raw: []byte(raw), Headers: smtp.Headers{TrackOpens: true}}, smtp.Headers{Tags: []string{"own"}, TrackOpens: true}, nil},
		{"keeps own X-SL headers", smtp.Message{Raw: []byte(raw)}, smtp.Headers{Tags: []string{"own"}}, nil},
		{"no Message-ID", smtp.Message{Raw: []byte(noID)}, smtp.Headers{Tags: []string{"own"}}, nil},
		{"refuses conflict", smtp.Message{Raw: []byte(raw), Headers: smtp.Headers{Tags: []string{"mine"}}}, smtp.Headers{}, smtp.ErrDuplicateHeader},
		{"LF line endings", smtp.Message{Raw: []byte(strings.ReplaceAll(raw, "\r\n", "\n")), Headers: smtp.Headers{TrackGA: true}}, smtp.Headers{Tags: []string{"own"}, TrackGA: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := tt.msg
			m.From, m.To = "a@example.com", []string{"b@example.com"}
			out, err := m.Bytes()
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(out, m.Raw) {
				t.Errorf("raw message changed:\n%s", out)
			}
			entity, err := message.Read(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			got, err := smtp.ParseHeaders(entity.Header.Map())
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("headers = %#v (%v), want %#v", got, err, tt.want)
			}
			if ids := entity.Header.Values("Message-Id"); len(ids) != 1 {
				t.Errorf("Message-ID fields = %q, want exactly one", ids)
			}
		})
	}
	if _, err := (&smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Raw: []byte(raw), Subject: "x"}).Bytes(); err == nil {
		t.Error("Raw with Subject accepted")
	}
}

func TestMessageNonASCIIAddress(t *testing.T) {
	t.Parallel()
	// Accepted by the shared rule; sending it needs SMTPUTF8 (tested
	// against the relay).
	if _, err := (&smtp.Message{From: "a@example.com", To: []string{"zoë@exämple.com"}, Text: "x"}).Bytes(); err != nil {
		t.Fatalf("Bytes: %v", err)
	}
}

func TestMessageInvalid(t *testing.T) {
	t.Parallel()
	valid := func() smtp.Message {
		return smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Text: "x", HTML: "<p>x</p>"}
	}
	type check struct {
		field   string // *AddressError.Field
		header  string // *HeaderError.Header
		part    string // *PartError.Part
		wantErr error
	}
	tests := []struct {
		name string
		edit func(*smtp.Message)
		want check
	}{
		{"missing from", func(m *smtp.Message) { m.From = "" }, check{field: "From"}},
		{"bad from", func(m *smtp.Message) { m.From = "not an address" }, check{field: "From"}},
		{"bad to", func(m *smtp.Message) { m.To = append(m.To, "bob@") }, check{field: "To"}},
		{"bad cc", func(m *smtp.Message) { m.Cc = []string{"<x@y"} }, check{field: "Cc"}},
		{"bad bcc", func(m *smtp.Message) { m.Bcc = []string{"a@b.c\r\nRCPT TO:<evil@x>"} }, check{field: "Bcc"}},
		{"dotless domain", func(m *smtp.Message) { m.To = []string{"ann@localhost"} }, check{field: "To"}},
		{"bad reply-to", func(m *smtp.Message) { m.ReplyTo = "nope" }, check{field: "ReplyTo"}},
		{"no recipients", func(m *smtp.Message) { m.To = nil }, check{wantErr: smtp.ErrNoRecipients}},
		{"CRLF in subject", func(m *smtp.Message) { m.Subject = "hi\r\nBcc: evil@example.com" }, check{header: "Subject", wantErr: smtp.ErrInvalidCharacter}},
		{"bad tag", func(m *smtp.Message) { m.Headers.Tags = []string{"a\nb"} }, check{header: smtp.HeaderTags, wantErr: smtp.ErrInvalidCharacter}},
		{"bad message id", func(m *smtp.Message) { m.MessageID = "a b@c" }, check{header: "Message-ID", wantErr: smtp.ErrInvalidCharacter}},
		{"LF in extra header", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "X-A", Value: "1\nBcc: x@example.com"}} }, check{header: "X-A", wantErr: smtp.ErrInvalidCharacter}},
		{"colon in header name", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "X-A: b", Value: "1"}} }, check{wantErr: smtp.ErrInvalidCharacter}},
		{"reserved header", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "bcc", Value: "x@example.com"}} }, check{header: "bcc", wantErr: smtp.ErrReservedHeader}},
		{"X-SL header", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "X-SL-Tags", Value: `["a"]`}} }, check{header: "X-SL-Tags", wantErr: smtp.ErrReservedHeader}},
		{"content header", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "Content-Type", Value: "text/plain"}} }, check{wantErr: smtp.ErrReservedHeader}},
		{"non-ASCII In-Reply-To", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "In-Reply-To", Value: "<é@example.com>"}} }, check{header: "In-Reply-To"}},
		{"bad References", func(m *smtp.Message) { m.ExtraHeaders = []smtp.Field{{Name: "References", Value: "a@example.com"}} }, check{header: "References"}},
		{"bad List-Unsubscribe", func(m *smtp.Message) { m.ListUnsubscribe = []string{"javascript:alert(1)"} }, check{header: "List-Unsubscribe"}},
		{"List-Unsubscribe with a non-ASCII host-less URL", func(m *smtp.Message) { m.ListUnsubscribe = []string{"https:///é"} }, check{header: "List-Unsubscribe"}},
		{"List-Unsubscribe with a space", func(m *smtp.Message) { m.ListUnsubscribe = []string{"https://example.com/a b"} }, check{header: "List-Unsubscribe"}},
		{"one-click without https", func(m *smtp.Message) {
			m.ListUnsubscribe, m.ListUnsubscribeOneClick = []string{"mailto:u@example.com"}, true
		}, check{header: "List-Unsubscribe-Post"}},
		{"List-Unsubscribe twice", func(m *smtp.Message) {
			m.ListUnsubscribe = []string{"https://example.com/u"}
			m.ExtraHeaders = []smtp.Field{{Name: "List-Unsubscribe", Value: "<https://example.com/v>"}}
		}, check{wantErr: smtp.ErrDuplicateHeader}},
		{"bad attachment type", func(m *smtp.Message) {
			m.Attachments = []smtp.Attachment{{Filename: "a.bin", ContentType: "application/", Data: []byte("x")}}
		}, check{part: "attachment"}},
		{"multipart attachment type", func(m *smtp.Message) {
			m.Attachments = []smtp.Attachment{{Filename: "a.bin", ContentType: "multipart/mixed", Data: []byte("x")}}
		}, check{part: "attachment"}},
		{"CRLF in attachment name", func(m *smtp.Message) {
			m.Attachments = []smtp.Attachment{{Filename: "a\r\n.txt", Data: []byte("x")}}
		}, check{part: "attachment", wantErr: smtp.ErrInvalidCharacter}},
		{"bad inline type", func(m *smtp.Message) {
			m.Inline = []smtp.Inline{{ContentID: "a@example.com", ContentType: "image/png; x", Data: []byte("x")}}
		}, check{part: "inline"}},
		{"inline without a type", func(m *smtp.Message) {
			m.Inline = []smtp.Inline{{ContentID: "a@example.com", Filename: "logo", Data: []byte("x")}}
		}, check{part: "inline"}},
		{"inline with a space in its Content-ID", func(m *smtp.Message) {
			m.Inline = []smtp.Inline{{ContentID: "my logo.png", ContentType: "image/png", Data: []byte("x")}}
		}, check{part: "inline"}},
		{"inline with a non-ASCII Content-ID", func(m *smtp.Message) {
			m.Inline = []smtp.Inline{{ContentID: "logö.png", ContentType: "image/png", Data: []byte("x")}}
		}, check{part: "inline"}},
		{"inline with two @ in its Content-ID", func(m *smtp.Message) {
			m.Inline = []smtp.Inline{{ContentID: "a@b@c", ContentType: "image/png", Data: []byte("x")}}
		}, check{part: "inline"}},
		{"inline with an empty Content-ID", func(m *smtp.Message) {
			m.Inline = []smtp.Inline{{ContentID: "<>", ContentType: "image/png", Data: []byte("x")}}
		}, check{part: "inline"}},
		{"inline without HTML", func(m *smtp.Message) {
			m.HTML = ""
			m.Inline = []smtp.Inline{{ContentID: "a@example.com", ContentType: "image/png", Data: []byte("x")}}
		}, check{part: "inline"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := valid()
			tt.edit(&m)
			_, err := m.Bytes()
			if err == nil {
				t.Fatal("Bytes accepted an invalid message")
			}
			var addrErr *smtp.AddressError
			if tt.want.field != "" && (!errors.As(err, &addrErr) || addrErr.Field != tt.want.field) {
				t.Errorf("err = %v, want *AddressError for %s", err, tt.want.field)
			}
			var headerErr *smtp.HeaderError
			if tt.want.header != "" && (!errors.As(err, &headerErr) || headerErr.Header != tt.want.header) {
				t.Errorf("err = %v, want *HeaderError for %s", err, tt.want.header)
			}
			var partErr *smtp.PartError
			if tt.want.part != "" && (!errors.As(err, &partErr) || partErr.Part != tt.want.part || !strings.Contains(err.Error(), tt.want.part)) {
				t.Errorf("err = %v, want *PartError for an %s", err, tt.want.part)
			}
			if tt.want.wantErr != nil && !errors.Is(err, tt.want.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.want.wantErr)
			}
		})
	}
}
