package legacy

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// MediaUploadParams are the parameters of Media.Upload.
type MediaUploadParams struct {
	// Data is the image itself; it is sent base64-encoded as MediaData (required).
	Data []byte
	// MediaType is the image's media type, e.g. "image/gif" or "image/jpeg". Empty: it is
	// detected from Data (http.DetectContentType). It must be an image/* type.
	MediaType string
	// Tags label the image. They are sent comma-separated in Tags, which is sent (empty)
	// even when there are none; a tag may not contain a comma.
	Tags []string
}

// MediaUploadResult is the answer of Media.Upload.
type MediaUploadResult struct {
	// Status is StatusCompleted.
	Status Status
	// MediaID identifies the image in the media library.
	MediaID int
}

// mediaType is the MediaType given, or the one detected from Data.
func (p MediaUploadParams) mediaType() string {
	if t := strings.TrimSpace(p.MediaType); t != "" {
		return t
	}
	return http.DetectContentType(p.Data)
}

// validate refuses empty media, media over maxSize (9; no bound when negative), a type that
// is not an image type and a tag holding a comma.
func (p MediaUploadParams) validate(cmd string, maxSize int64) error {
	if len(p.Data) == 0 {
		return invalid(cmd, 0, "MediaData", "the media is empty")
	}
	if maxSize >= 0 && int64(len(p.Data)) > maxSize {
		return invalid(cmd, ErrMediaTooLarge, "MediaData",
			fmt.Sprintf("the media is %d bytes, over the maximum of %d", len(p.Data), maxSize))
	}
	if t := p.mediaType(); !IsImageType(t) {
		return invalid(cmd, 0, "MediaType", fmt.Sprintf("%q is not an image media type", excerpt(t)))
	}
	for _, tag := range p.Tags {
		if strings.Contains(tag, ",") {
			return invalid(cmd, 0, "Tags", fmt.Sprintf("tag %q holds a comma, the separator of Tags", excerpt(tag)))
		}
	}
	return nil
}

// MediaUpload adds an image to the account's media library (Media.Upload).
//
// Media over the client's maximum size (WithMaxMediaSize; DefaultMaxMediaSize) fails
// before sending with a *ValidationError matching ErrMediaTooLarge, as does a type that is
// not an image/* type (without a code: the service has none for it). Media.Upload is a
// one-shot write: it is retried only when the request surely did not reach the service
// (a dial error, 429, 503), so that a retry never stores the image twice.
func (c *Client) MediaUpload(ctx context.Context, p MediaUploadParams) (*MediaUploadResult, error) {
	const cmd = CommandMediaUpload
	if err := p.validate(cmd, c.maxMediaSize); err != nil {
		return nil, err
	}
	mediaType := p.mediaType()
	form := url.Values{
		"MediaData": {base64.StdEncoding.EncodeToString(p.Data)},
		"MediaType": {mediaType},
		"Tags":      {strings.Join(p.Tags, ",")},
	}
	st, err := c.call(ctx, cmd, form)
	if err != nil {
		return nil, err
	}
	id, err := intMember(cmd, st, "MediaID")
	if err != nil {
		return nil, err
	}
	return &MediaUploadResult{Status: Status(st.Text("Status")), MediaID: id}, nil
}

// IsImageType reports whether mediaType is a well-formed image/* media type, parameters
// allowed (e.g. "image/svg+xml; charset=utf-8").
func IsImageType(mediaType string) bool {
	mt, _, err := mime.ParseMediaType(mediaType)
	return err == nil && strings.HasPrefix(mt, "image/") && len(mt) > len("image/")
}

// MediaBrowseResult is the answer of Media.Browse.
type MediaBrowseResult struct {
	// Status is StatusCompleted, as the service sends it.
	Status Status
	// URLs are the images' addresses, in the order of their members MediaURL1 …
	// MediaURL<n> (by number, gaps allowed).
	URLs []string
}

// MediaBrowse returns the images of the account's media library (Media.Browse) and the
// answer's Status. The command is a read.
func (c *Client) MediaBrowse(ctx context.Context) (*MediaBrowseResult, error) {
	st, err := c.call(ctx, CommandMediaBrowse, nil)
	if err != nil {
		return nil, err
	}
	return &MediaBrowseResult{Status: Status(st.Text("Status")), URLs: mediaURLs(st)}, nil
}

// mediaURLs collects the MediaURL<n> members by ascending n.
func mediaURLs(st Struct) []string {
	type numbered struct {
		n   int
		url string
	}
	var items []numbered
	for _, m := range st {
		rest, ok := strings.CutPrefix(m.Name, "MediaURL")
		if !ok || rest == "" || rest[0] == '+' || rest[0] == '-' {
			continue
		}
		n, err := strconv.Atoi(rest)
		if err != nil {
			continue
		}
		items = append(items, numbered{n, m.Value.Text()})
	}
	slices.SortStableFunc(items, func(a, b numbered) int { return cmp.Compare(a.n, b.n) })
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.url
	}
	return out
}
