package smtp_test

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-sendloop/sendloop/smtp"
)

var testDate = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)

func buildMessage(t *testing.T, m *smtp.Message) (*mail.Message, []byte) {
	t.Helper()
	return buildMessageMaxLine(t, m, 78)
}

func buildMessageMaxLine(t *testing.T, m *smtp.Message, maxLine int) (*mail.Message, []byte) {
	t.Helper()
	raw, err := m.Bytes()
	if err != nil {
		t.Fatalf("Bytes: %v", err)
	}
	checkLines(t, raw, maxLine)
	parsed, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("ReadMessage: %v\n%s", err, raw)
	}
	return parsed, raw
}

// checkLines checks CRLF line endings and line lengths.
func checkLines(t *testing.T, raw []byte, maxLine int) {
	t.Helper()
	if !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Errorf("message does not end with CRLF")
	}
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.ContainsAny(line, "\r\n") {
			t.Errorf("line %d has a bare CR or LF: %q", i+1, line)
		}
		if len(line) > maxLine {
			t.Errorf("line %d is %d characters long: %q", i+1, len(line), line)
		}
	}
}

func TestMessageTextOnly(t *testing.T) {
	t.Parallel()
	msg, raw := buildMessage(t, &smtp.Message{
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
		if got := msg.Header.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if bytes.Contains(raw, []byte("secret@")) || msg.Header.Get("Bcc") != "" {
		t.Errorf("Bcc leaked into the message:\n%s", raw)
	}
	body, _ := io.ReadAll(msg.Body)
	if got := decodeQP(t, body); got != "Hi Bob,\r\nsee you =soon=.\r\n"+strings.Repeat("long ", 40)+"\r\n" {
		t.Errorf("body = %q", got)
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
		msg, _ := buildMessage(t, &smtp.Message{
			From:    "Zoë Ærø <zoe@example.com>",
			To:      []string{"José <jose@example.net>"},
			Subject: subject,
			Text:    "x",
		})
		decoded, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
		if err != nil || decoded != subject {
			t.Errorf("subject decodes to %q (%v), want %q", decoded, err, subject)
		}
		from, err := msg.Header.AddressList("From")
		if err != nil || from[0].Name != "Zoë Ærø" || from[0].Address != "zoe@example.com" {
			t.Errorf("From = %v (%v)", from, err)
		}
		to, err := msg.Header.AddressList("To")
		if err != nil || to[0].Name != "José" {
			t.Errorf("To = %v (%v)", to, err)
		}
	}
}

func TestMessageMultipart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		msg         smtp.Message
		wantType    string
		wantParts   []string // media types of the leaves, in order
		attachments []smtp.Attachment
	}{
		{"html only", smtp.Message{HTML: "<p>Hi</p>"}, "text/html", []string{"text/html"}, nil},
		{"text and html", smtp.Message{Text: "Hi", HTML: "<p>Hi</p>"}, "multipart/alternative", []string{"text/plain", "text/html"}, nil},
		{
			"text, html and attachments",
			smtp.Message{Text: "Hi", HTML: "<p>Hi</p>", Attachments: []smtp.Attachment{
				{Filename: "report.pdf", Data: bytes.Repeat([]byte{0, 1, 2, 255}, 100)},
				{Filename: "données été.csv", ContentType: "text/csv", Data: []byte("a,b\n")},
				{Filename: "noext", Data: []byte("x")},
			}},
			"multipart/mixed", []string{"text/plain", "text/html", "application/pdf", "text/csv", "application/octet-stream"}, nil,
		},
		{"text and attachment", smtp.Message{Text: "Hi", Attachments: []smtp.Attachment{{Filename: "a.txt", Data: []byte("x")}}}, "multipart/mixed", []string{"text/plain", "text/plain"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := tt.msg
			m.From, m.To = "a@example.com", []string{"b@example.com"}
			msg, _ := buildMessage(t, &m)
			mediaType, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
			if err != nil || mediaType != tt.wantType {
				t.Fatalf("Content-Type = %q (%v), want %s", msg.Header.Get("Content-Type"), err, tt.wantType)
			}
			var leaves []string
			var files []smtp.Attachment
			walkLeaves(t, mediaType, params, msg.Body, func(mediaType string, part *multipart.Part) {
				leaves = append(leaves, mediaType)
				if part != nil && part.FileName() != "" {
					data, _ := io.ReadAll(part) // NextPart does not decode base64
					files = append(files, smtp.Attachment{Filename: part.FileName(), ContentType: mediaType, Data: decodeBase64(t, data)})
				}
			})
			if !reflect.DeepEqual(leaves, tt.wantParts) {
				t.Errorf("parts = %v, want %v", leaves, tt.wantParts)
			}
			for i, a := range m.Attachments {
				if i >= len(files) || files[i].Filename != a.Filename || !bytes.Equal(files[i].Data, a.Data) {
					t.Errorf("attachment %d does not round-trip: %+v", i, files)
				}
			}
		})
	}
}

func walkLeaves(t *testing.T, mediaType string, params map[string]string, body io.Reader, visit func(string, *multipart.Part)) {
	t.Helper()
	if !strings.HasPrefix(mediaType, "multipart/") {
		visit(mediaType, nil)
		return
	}
	reader := multipart.NewReader(body, params["boundary"])
	for {
		part, err := reader.NextPart()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		partType, partParams, err := mime.ParseMediaType(part.Header.Get("Content-Type"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(partType, "multipart/") {
			walkLeaves(t, partType, partParams, part, visit)
			continue
		}
		visit(partType, part)
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
	// The long merge variable cannot be folded below 78 characters.
	msg, raw := buildMessageMaxLine(t, &smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Text: "x", Headers: headers}, 998)
	got, err := smtp.ParseHeaders(msg.Header)
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
	if !bytes.Contains(raw, []byte("X-SL-Merge-Vars: ")) || !bytes.Contains(raw, []byte("X-SL-Track-Opens: 1\r\n")) {
		t.Errorf("headers not spelled as documented:\n%s", raw)
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
	const raw = "From: a@example.com\r\nTo: b@example.com\r\nSubject: raw\r\nX-SL-Tags: [\"own\"]\r\n\r\nbody\r\n"
	tests := []struct {
		name    string
		msg     smtp.Message
		want    smtp.Headers
		wantErr error
	}{
		{"adds headers", smtp.Message{Raw: []byte(raw), Headers: smtp.Headers{TrackOpens: true}}, smtp.Headers{Tags: []string{"own"}, TrackOpens: true}, nil},
		{"keeps own X-SL headers", smtp.Message{Raw: []byte(raw)}, smtp.Headers{Tags: []string{"own"}}, nil},
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
			parsed, err := mail.ReadMessage(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			got, err := smtp.ParseHeaders(parsed.Header)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("headers = %#v (%v), want %#v", got, err, tt.want)
			}
		})
	}
	if _, err := (&smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Raw: []byte(raw), Subject: "x"}).Bytes(); err == nil {
		t.Error("Raw with Subject accepted")
	}
}

func TestMessageInvalid(t *testing.T) {
	t.Parallel()
	valid := func() smtp.Message {
		return smtp.Message{From: "a@example.com", To: []string{"b@example.com"}, Text: "x"}
	}
	tests := []struct {
		name      string
		edit      func(*smtp.Message)
		wantField string
		wantErr   error
	}{
		{"missing from", func(m *smtp.Message) { m.From = "" }, "From", nil},
		{"bad from", func(m *smtp.Message) { m.From = "not an address" }, "From", nil},
		{"bad to", func(m *smtp.Message) { m.To = append(m.To, "bob@") }, "To", nil},
		{"bad cc", func(m *smtp.Message) { m.Cc = []string{"<x@y"} }, "Cc", nil},
		{"bad bcc", func(m *smtp.Message) { m.Bcc = []string{"a@b.c\r\nRCPT TO:<evil@x>"} }, "Bcc", nil},
		{"non-ASCII address", func(m *smtp.Message) { m.To = []string{"zoë@example.com"} }, "To", nil},
		{"bad reply-to", func(m *smtp.Message) { m.ReplyTo = "nope" }, "ReplyTo", nil},
		{"no recipients", func(m *smtp.Message) { m.To = nil }, "", smtp.ErrNoRecipients},
		{"CRLF in subject", func(m *smtp.Message) { m.Subject = "hi\r\nBcc: evil@example.com" }, "", smtp.ErrInvalidCharacter},
		{"bad tag", func(m *smtp.Message) { m.Headers.Tags = []string{"a\nb"} }, "", smtp.ErrInvalidCharacter},
		{"bad message id", func(m *smtp.Message) { m.MessageID = "a b@c" }, "", smtp.ErrInvalidCharacter},
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
			if tt.wantField != "" {
				var addrErr *smtp.AddressError
				if !errors.As(err, &addrErr) || addrErr.Field != tt.wantField {
					t.Errorf("err = %v, want *AddressError for %s", err, tt.wantField)
				}
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func decodeQP(t *testing.T, body []byte) string {
	t.Helper()
	decoded, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	return string(decoded)
}

func decodeBase64(t *testing.T, body []byte) []byte {
	t.Helper()
	decoded, err := io.ReadAll(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	return decoded
}
