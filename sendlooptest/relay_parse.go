package sendlooptest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/emersion/go-message"
	"github.com/emersion/go-message/mail"

	"github.com/go-sendloop/sendloop/personalize"
	slsmtp "github.com/go-sendloop/sendloop/smtp"
)

// relayParse fills the parsed fields of msg from msg.Raw with go-message,
// and personalizes the subject and bodies.
func relayParse(msg *RelayMessage) error {
	entity, err := message.Read(bytes.NewReader(msg.Raw))
	if err != nil && !message.IsUnknownCharset(err) {
		return fmt.Errorf("malformed message: %w", err)
	}
	msg.Header = mail.Header{Header: entity.Header}
	if msg.SLHeaders, err = slsmtp.ParseHeaders(entity.Header.Map()); err != nil {
		return err
	}
	if msg.Subject, err = msg.Header.Subject(); err != nil {
		return fmt.Errorf("malformed Subject: %w", err)
	}
	if msg.MessageID, err = msg.Header.MessageID(); err != nil {
		return fmt.Errorf("malformed Message-ID: %w", err)
	}
	if msg.Structure, err = relayWalk(msg, entity, 0); err != nil {
		return err
	}
	vars := msg.SLHeaders.MergeVars
	for _, field := range []struct {
		name     string
		in       string
		rendered *string
	}{
		{"subject", msg.Subject, &msg.RenderedSubject},
		{"text", msg.Text, &msg.RenderedText},
		{"HTML", msg.HTML, &msg.RenderedHTML},
	} {
		if *field.rendered, err = personalize.Render(field.in, vars); err != nil {
			return fmt.Errorf("personalizing the %s: %w", field.name, err)
		}
	}
	return nil
}

// relayMaxDepth bounds multipart nesting, which real messages keep to 3 or 4.
const relayMaxDepth = 10

// relayWalk collects the parts of e and returns its MIME structure.
func relayWalk(msg *RelayMessage, e *message.Entity, depth int) (string, error) {
	if depth > relayMaxDepth {
		return "", errors.New("multipart nested too deep")
	}
	mediaType, params, err := e.Header.ContentType()
	if err != nil {
		if e.Header.Get("Content-Type") != "" {
			return "", fmt.Errorf("malformed Content-Type %q: %w", e.Header.Get("Content-Type"), err)
		}
		mediaType = "text/plain"
	}
	if mr := e.MultipartReader(); mr != nil {
		var children []string
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil && !message.IsUnknownCharset(err) {
				return "", fmt.Errorf("malformed %s: %w", mediaType, err)
			}
			child, err := relayWalk(msg, part, depth+1)
			if err != nil {
				return "", err
			}
			children = append(children, child)
		}
		return mediaType + "(" + strings.Join(children, ", ") + ")", nil
	}
	data, err := io.ReadAll(e.Body)
	if err != nil {
		return "", fmt.Errorf("malformed %s body: %w", mediaType, err)
	}
	disposition, dispParams, _ := e.Header.ContentDisposition()
	filename := dispParams["filename"]
	if filename == "" {
		filename = params["name"]
	}
	contentID := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(e.Header.Get("Content-Id")), "<"), ">")
	part := RelayAttachment{Filename: filename, ContentType: mediaType, ContentID: contentID, Data: data}
	switch {
	case disposition == "attachment" || (filename != "" && contentID == ""):
		msg.Attachments = append(msg.Attachments, part)
	case contentID != "":
		msg.Inline = append(msg.Inline, part)
	case mediaType == "text/plain" && msg.Text == "":
		msg.Text = string(data)
	case mediaType == "text/html" && msg.HTML == "":
		msg.HTML = string(data)
	}
	return mediaType, nil
}
