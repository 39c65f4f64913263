package smtp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"path/filepath"
	"strings"

	"github.com/emersion/go-message"
)

// part is a node of the MIME tree: a leaf with a body, or a multipart with
// children.
type part struct {
	header   []headerItem
	body     []byte
	children []*part
}

func textPart(mediaType, content string) *part {
	return &part{
		header: []headerItem{
			{key: "Content-Type", value: mediaType + "; charset=utf-8"},
			{key: "Content-Transfer-Encoding", value: "quoted-printable"},
		},
		body: []byte(content),
	}
}

func multipartPart(mediaType string, params map[string]string, children ...*part) *part {
	if params == nil {
		params = map[string]string{}
	}
	params["boundary"] = newBoundary()
	return &part{header: []headerItem{{key: "Content-Type", value: mime.FormatMediaType(mediaType, params)}}, children: children}
}

// newBoundary makes a boundary that cannot occur in quoted-printable or
// base64 text ("=_" never does).
func newBoundary() string {
	var random [12]byte
	_, _ = rand.Read(random[:])
	return "=_" + hex.EncodeToString(random[:])
}

// body builds the MIME tree:
//
//	mixed(alternative(text, related(html, inline...)), attachment...)
//
// each level present only when needed.
func (m *Message) body() (*part, error) {
	if len(m.Inline) > 0 && m.HTML == "" {
		return nil, &PartError{Part: "inline", Index: 0, Name: m.Inline[0].ContentID, Err: errors.New("inline parts need an HTML body that refers to them")}
	}
	var html *part
	if m.HTML != "" {
		html = textPart("text/html", m.HTML)
		if len(m.Inline) > 0 {
			related := multipartPart("multipart/related", map[string]string{"type": "text/html"}, html)
			for i, in := range m.Inline {
				p, err := inlinePart(i, in)
				if err != nil {
					return nil, err
				}
				related.children = append(related.children, p)
			}
			html = related
		}
	}
	var root *part
	switch {
	case html == nil:
		root = textPart("text/plain", m.Text)
	case m.Text == "":
		root = html
	default:
		// Plain text first: RFC 2046 orders alternatives by preference.
		root = multipartPart("multipart/alternative", nil, textPart("text/plain", m.Text), html)
	}
	if len(m.Attachments) > 0 {
		mixed := multipartPart("multipart/mixed", nil, root)
		for i, a := range m.Attachments {
			p, err := attachmentPart(i, a)
			if err != nil {
				return nil, err
			}
			mixed.children = append(mixed.children, p)
		}
		root = mixed
	}
	return root, nil
}

// mediaType parses contentType (guessed from filename when empty, else
// fallback) for a base64 part.
func mediaType(contentType, filename, fallback string) (string, map[string]string, error) {
	if contentType == "" {
		contentType = mime.TypeByExtension(filepath.Ext(filename))
	}
	if contentType == "" {
		if fallback == "" {
			return "", nil, errors.New("no content type, and none known for the file name's extension")
		}
		contentType = fallback
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return "", nil, fmt.Errorf("content type %q: %w", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") || strings.HasPrefix(mt, "message/") {
		return "", nil, fmt.Errorf("content type %q: a part with data cannot be %s", contentType, mt)
	}
	if cs := strings.ToLower(params["charset"]); cs != "" && cs != "utf-8" && cs != "us-ascii" {
		return "", nil, fmt.Errorf("content type %q: go-message writes only utf-8 or us-ascii parts", contentType)
	}
	return mt, params, nil
}

func attachmentPart(i int, a Attachment) (*part, error) {
	fail := func(err error) (*part, error) {
		return nil, &PartError{Part: "attachment", Index: i, Name: a.Filename, Err: err}
	}
	mt, params, err := mediaType(a.ContentType, a.Filename, "application/octet-stream")
	if err != nil {
		return fail(err)
	}
	disposition := "attachment"
	if a.Filename != "" {
		if err := checkHeaderText("filename", a.Filename); err != nil {
			return fail(err)
		}
		params["name"] = a.Filename
		disposition = formatParams("attachment", map[string]string{"filename": a.Filename})
	}
	return &part{header: []headerItem{
		{key: "Content-Type", value: formatParams(mt, params)},
		{key: "Content-Disposition", value: disposition},
		{key: "Content-Transfer-Encoding", value: "base64"},
	}, body: a.Data}, nil
}

func inlinePart(i int, in Inline) (*part, error) {
	fail := func(err error) (*part, error) {
		return nil, &PartError{Part: "inline", Index: i, Name: in.ContentID, Err: err}
	}
	cid, err := checkContentID(in.ContentID)
	if err != nil {
		return fail(errors.New("Content-ID: want printable ASCII without spaces or brackets, e.g. logo.png or logo@example.com"))
	}
	mt, params, err := mediaType(in.ContentType, in.Filename, "")
	if err != nil {
		return fail(err)
	}
	disposition := "inline"
	if in.Filename != "" {
		if err := checkHeaderText("filename", in.Filename); err != nil {
			return fail(err)
		}
		params["name"] = in.Filename
		disposition = formatParams("inline", map[string]string{"filename": in.Filename})
	}
	return &part{header: []headerItem{
		{key: "Content-Type", value: formatParams(mt, params)},
		{key: "Content-Disposition", value: disposition},
		{key: "Content-ID", value: cid},
		{key: "Content-Transfer-Encoding", value: "base64"},
	}, body: in.Data}, nil
}

// checkContentID checks a Content-ID given with or without angle brackets
// and returns it with them. RFC 2392 asks for the id@host form, but mail
// clients resolve a "cid:" URL by comparing it with the Content-ID as
// written, so a bare file name ("logo.png") works as well and is accepted.
func checkContentID(s string) (string, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(s, "<"), ">")
	if strings.Contains(id, "@") {
		return checkMessageID("Content-ID", s)
	}
	if id == "" || strings.IndexFunc(id, func(r rune) bool { return r <= ' ' || r >= 0x7f || strings.ContainsRune(`<>()[]\",;:`, r) }) >= 0 {
		return "", &HeaderError{Header: "Content-ID", Key: s, Err: fmt.Errorf("%w: want printable ASCII", ErrInvalidCharacter)}
	}
	return "<" + id + ">", nil
}

// formatParams formats a media type or disposition with parameters:
// non-ASCII values are RFC 2231 (mime.FormatMediaType).
func formatParams(value string, params map[string]string) string {
	return mime.FormatMediaType(value, params)
}

// writeBody writes p's body (and its children) to w, a go-message Writer made
// with p's header.
func (p *part) writeBody(w *message.Writer) error {
	if p.children == nil {
		if _, err := w.Write(p.body); err != nil {
			return err
		}
		return w.Close()
	}
	for _, c := range p.children {
		header, err := (&headerList{fields: c.header}).header()
		if err != nil {
			return err
		}
		cw, err := w.CreatePart(header)
		if err != nil {
			return err
		}
		if err := c.writeBody(cw); err != nil {
			return err
		}
	}
	return w.Close()
}
