package spamcount

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxDepth bounds the nesting of multiparts that are decoded; deeper
// parts are ignored.
const maxDepth = 32

// decoder turns one raw message into the texts whose words are counted:
// the decoded Subject and the decoded text parts of the body, HTML
// stripped. It never fails: a part that cannot be decoded is counted as
// its raw bytes and the message is marked malformed. A decoder belongs to
// one goroutine.
type decoder struct {
	texts     [][]byte
	malformed bool
	why       string // the first malformed part's problem, for debugging
	words     mime.WordDecoder
}

func newDecoder() *decoder {
	d := &decoder{}
	// Unknown charsets: keep the bytes as they are (counted as UTF-8).
	d.words.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	return d
}

// decode decodes raw and returns the texts to count (valid until the next
// call) and whether some part of it was malformed.
func (d *decoder) decode(raw []byte) (texts [][]byte, malformed bool) {
	d.texts, d.malformed, d.why = d.texts[:0], false, ""
	if len(bytes.TrimSpace(raw)) == 0 {
		return d.texts, false
	}
	br := bytes.NewReader(raw)
	msg, err := mail.ReadMessage(br)
	if err != nil {
		d.bad("header: " + err.Error())
		d.texts = append(d.texts, raw)
		return d.texts, true
	}
	if subj := msg.Header["Subject"]; len(subj) > 0 {
		for _, s := range subj {
			dec, err := d.words.DecodeHeader(s)
			if err != nil {
				d.bad("subject: " + err.Error())
				dec = s
			}
			d.texts = append(d.texts, []byte(dec))
		}
	}
	// The body is the rest of raw after the header (ReadMessage reads
	// through a bufio.Reader).
	var body []byte
	if b, ok := msg.Body.(*bufio.Reader); ok {
		body = raw[len(raw)-br.Len()-b.Buffered():]
	} else if body, err = io.ReadAll(msg.Body); err != nil {
		d.bad("body: " + err.Error())
		body = raw
	}
	d.entity(textproto.MIMEHeader(msg.Header), body, 0)
	return d.texts, d.malformed
}

// entity decodes one MIME entity (the message or a part) given its header
// and raw body.
func (d *decoder) entity(h textproto.MIMEHeader, body []byte, depth int) {
	ct := h.Get("Content-Type")
	mt, params := "text/plain", map[string]string(nil)
	if strings.TrimSpace(ct) != "" {
		var err error
		mt, params, err = mime.ParseMediaType(ct)
		if err != nil && mt == "" {
			// Unparsable Content-Type: count the raw body.
			d.bad("content-type: " + err.Error())
			d.texts = append(d.texts, body)
			return
		}
	}
	switch {
	case mt == "text/plain" || mt == "text/html":
		text, err := decodeTransfer(h.Get("Content-Transfer-Encoding"), body)
		if err != nil {
			d.bad(err.Error())
			text = body
		}
		if mt == "text/html" {
			text = stripHTML(text)
		}
		d.texts = append(d.texts, text)
	case strings.HasPrefix(mt, "multipart/"):
		if depth >= maxDepth {
			return
		}
		d.multipart(params["boundary"], body, depth)
	}
	// Other types (attachments, images, message/rfc822, ...) are ignored.
}

// multipart decodes the parts of a multipart body. If the multipart
// structure is broken, what it produced is dropped and the raw body is
// counted instead.
func (d *decoder) multipart(boundary string, body []byte, depth int) {
	mark := len(d.texts)
	fail := func(why string) {
		d.texts = d.texts[:mark]
		d.bad("multipart: " + why)
		d.texts = append(d.texts, body)
	}
	if boundary == "" {
		fail("no boundary")
		return
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return
		}
		if err != nil {
			fail(err.Error())
			return
		}
		var pb []byte
		keep := decoded(p.Header)
		if keep {
			pb, err = io.ReadAll(p)
		} else {
			_, err = io.Copy(io.Discard, p) // an attachment, an image, ...
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			fail("part: " + err.Error())
			return
		}
		if err == io.ErrUnexpectedEOF {
			// No closing boundary (common in real mail): the part runs
			// to the end of the body.
			d.bad("multipart: no closing boundary")
			if keep {
				d.entity(p.Header, pb, depth+1)
			}
			return
		}
		if keep {
			d.entity(p.Header, pb, depth+1)
		}
	}
}

// errEncoding reports a transfer encoding that could not be decoded.
var errEncoding = errors.New("spamcount: bad transfer encoding")

// decodeTransfer undoes a Content-Transfer-Encoding. Unknown encodings
// (7bit, 8bit, binary, x-anything) leave the body as it is.
func decodeTransfer(cte string, body []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "quoted-printable":
		return decodeQP(body), nil
	case "base64":
		return decodeBase64(body)
	}
	return body, nil
}

// decodeBase64 decodes base64 leniently: white space anywhere and missing
// or extra padding are accepted; any other byte is an error.
func decodeBase64(body []byte) ([]byte, error) {
	clean := make([]byte, 0, len(body))
	for _, c := range body {
		switch c {
		case ' ', '\t', '\r', '\n', '\f', '\v':
		default:
			clean = append(clean, c)
		}
	}
	clean = bytes.TrimRight(clean, "=")
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
	n, err := base64.RawStdEncoding.Decode(out, clean)
	if err != nil {
		return nil, fmt.Errorf("%w: base64: %w", errEncoding, err)
	}
	return out[:n], nil
}

// stripHTML removes tags and comments (each replaced by a space, so that
// they separate words) and decodes character references: the named ones
// amp, lt, gt, quot, apos and nbsp, and numeric ones (&#65; &#x41;).
// Anything else is kept as text.
func stripHTML(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '<' && i+1 < len(b) && isTagStart(b[i+1]):
			end := -1
			if bytes.HasPrefix(b[i:], []byte("<!--")) {
				if j := bytes.Index(b[i+4:], []byte("-->")); j >= 0 {
					end = i + 4 + j + 3
				}
			} else if j := bytes.IndexByte(b[i+1:], '>'); j >= 0 {
				end = i + 1 + j + 1
			}
			if end < 0 { // unterminated: the rest is a tag
				end = len(b)
			}
			out = append(out, ' ')
			i = end
		case c == '&':
			r, n := entity(b[i:])
			if n == 0 {
				out = append(out, c)
				i++
				continue
			}
			out = utf8.AppendRune(out, r)
			i += n
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

func isTagStart(c byte) bool {
	return c == '/' || c == '!' || c == '?' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

var namedEntities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "nbsp": '\u00a0'}

// entity decodes the character reference at the start of b ("&...;") and
// returns the rune and its length, or n == 0 if there is none.
func entity(b []byte) (r rune, n int) {
	end := bytes.IndexByte(b[:min(len(b), 12)], ';')
	if end < 2 {
		return 0, 0
	}
	name := string(b[1:end])
	if name[0] == '#' {
		var v uint64
		var err error
		if len(name) > 1 && (name[1] == 'x' || name[1] == 'X') {
			v, err = strconv.ParseUint(name[2:], 16, 32)
		} else {
			v, err = strconv.ParseUint(name[1:], 10, 32)
		}
		if err != nil || v > utf8.MaxRune {
			return 0, 0
		}
		r = rune(v)
		if !utf8.ValidRune(r) || r == 0 {
			r = utf8.RuneError
		}
		return r, end + 1
	}
	if r, ok := namedEntities[strings.ToLower(name)]; ok {
		return r, end + 1
	}
	return 0, 0
}

func (d *decoder) bad(why string) {
	if !d.malformed {
		d.why = why
	}
	d.malformed = true
}

// decodeQP decodes quoted-printable leniently (it never fails): =XX
// (either case) is the byte XX, "=" before the end of a line (after
// optional spaces or tabs) is a soft line break, any other "=" is kept,
// and spaces and tabs at the end of a line are removed (RFC 2045 6.7).
func decodeQP(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch c {
		case '=':
			if i+2 < len(b) && unhex(b[i+1]) >= 0 && unhex(b[i+2]) >= 0 {
				out = append(out, byte(unhex(b[i+1])<<4|unhex(b[i+2])))
				i += 3
				continue
			}
			j := skipBlanks(b, i+1)
			if n := eol(b, j); n >= 0 {
				i = j + n // soft line break
				continue
			}
			out = append(out, c)
			i++
		case ' ', '\t':
			j := skipBlanks(b, i)
			if eol(b, j) < 0 {
				out = append(out, b[i:j]...)
			}
			i = j
		default:
			out = append(out, c)
			i++
		}
	}
	return out
}

func skipBlanks(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	return i
}

// eol returns the length of the line end at b[i:] (0 at the end of b, 1
// for LF, 2 for CRLF), or -1 if there is none.
func eol(b []byte, i int) int {
	switch {
	case i == len(b):
		return 0
	case b[i] == '\n':
		return 1
	case b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n':
		return 2
	}
	return -1
}

func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// decoded reports whether a part with header h is decoded (a text or
// multipart type, or a Content-Type entity would treat as raw text), as
// opposed to ignored.
func decoded(h textproto.MIMEHeader) bool {
	ct := h.Get("Content-Type")
	if strings.TrimSpace(ct) == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return mt == "" && err != nil || mt == "text/plain" || mt == "text/html" || strings.HasPrefix(mt, "multipart/")
}
