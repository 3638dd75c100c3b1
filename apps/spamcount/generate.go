package spamcount

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// ListedRate is the probability that a generated word (in a Subject or a
// text part) is one of the listed words, drawn uniformly from the built-in
// list; the others are filler words that are not listed.
const ListedRate = 1.0 / 20

// Generate writes messages e-mail messages into dir (created if needed),
// one per file named 000000.eml, 000001.eml, ... The same seed gives the
// same bytes. Messages have ordinary headers and cycle through five
// shapes: plain 7bit text, quoted-printable text, base64 text,
// multipart/alternative (quoted-printable text and base64 HTML of the same
// words), and multipart/mixed holding such an alternative and a base64
// binary attachment (ignored when counting). Subjects are sometimes
// RFC 2047 encoded. Words are listed words at ListedRate, in mixed case.
func Generate(dir string, messages int, seed uint64) error {
	if messages < 0 {
		return fmt.Errorf("spamcount: generate %d messages", messages)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("spamcount: %w", err)
	}
	g := &generator{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), words: DefaultWords()}
	g.fillers = fillers(g.words)
	for i := range messages {
		path := filepath.Join(dir, fmt.Sprintf("%06d.eml", i))
		if err := g.write(path, i); err != nil {
			return fmt.Errorf("spamcount: generate %s: %w", path, err)
		}
	}
	return nil
}

type generator struct {
	rng     *rand.Rand
	words   []string
	fillers []string
}

// fillers makes 512 pronounceable words that are not listed.
func fillers(listed []string) []string {
	is := map[string]bool{}
	for _, w := range listed {
		is[w] = true
	}
	cons := []string{"b", "c", "d", "f", "g", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "tr"}
	vow := []string{"a", "e", "i", "o", "u", "ea", "ou"}
	r := rand.New(rand.NewPCG(1, 2))
	var out []string
	seen := map[string]bool{}
	for len(out) < 512 {
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString(cons[r.IntN(len(cons))])
			b.WriteString(vow[r.IntN(len(vow))])
		}
		if r.IntN(2) == 0 {
			b.WriteString(cons[r.IntN(len(cons))])
		}
		w := b.String()
		if !is[w] && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// word returns a listed word at ListedRate, else a filler, in mixed case.
func (g *generator) word() string {
	var w string
	if g.rng.Float64() < ListedRate {
		w = g.words[g.rng.IntN(len(g.words))]
	} else {
		w = g.fillers[g.rng.IntN(len(g.fillers))]
	}
	switch g.rng.IntN(10) {
	case 0:
		return strings.ToUpper(w)
	case 1, 2:
		return strings.ToUpper(w[:1]) + w[1:]
	}
	return w
}

// text returns n words in lines with punctuation.
func (g *generator) text(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(g.word())
		switch {
		case i%12 == 11:
			b.WriteString(".\n")
		case g.rng.IntN(8) == 0:
			b.WriteString(", ")
		default:
			b.WriteByte(' ')
		}
	}
	b.WriteByte('\n')
	return b.String()
}

func (g *generator) html(text string) string {
	var b strings.Builder
	b.WriteString("<html><head><title>News</title></head><body>\n<p>")
	for i, w := range strings.Fields(text) {
		if i%7 == 3 {
			fmt.Fprintf(&b, "<b>%s</b> ", w)
		} else {
			b.WriteString(w + " ")
		}
		if i%12 == 11 {
			b.WriteString("</p>\n<p>")
		}
	}
	b.WriteString("</p>\n</body></html>\n")
	return b.String()
}

func (g *generator) write(path string, i int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	subject := strings.TrimSpace(g.text(3 + g.rng.IntN(4)))
	if g.rng.IntN(4) == 0 {
		subject = "=?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte(subject)) + "?="
	}
	fmt.Fprintf(w, "From: sender%d@example.com\nTo: user%d@example.org\nSubject: %s\nDate: Mon, 1 Jan 2024 %02d:%02d:00 +0000\nMessage-ID: <%d.%d@example.com>\nMIME-Version: 1.0\n",
		g.rng.IntN(1000), g.rng.IntN(1000), subject, i/60%24, i%60, i, g.rng.Uint32())
	body := g.text(50 + g.rng.IntN(400))
	switch i % 5 {
	case 0:
		fmt.Fprintf(w, "Content-Type: text/plain; charset=us-ascii\nContent-Transfer-Encoding: 7bit\n\n%s", body)
	case 1:
		fmt.Fprintf(w, "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n%s", qp(body))
	case 2:
		fmt.Fprintf(w, "Content-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n%s", b64(body))
	case 3:
		fmt.Fprintf(w, "Content-Type: multipart/alternative; boundary=\"alt-%d\"\n\n%s", i, g.alternative(i, body))
	case 4:
		att := make([]byte, 256+g.rng.IntN(4096))
		for j := range att {
			att[j] = byte(g.rng.Uint32())
		}
		fmt.Fprintf(w, "Content-Type: multipart/mixed; boundary=\"mix-%d\"\n\nThis is a multi-part message in MIME format.\n"+
			"--mix-%d\nContent-Type: multipart/alternative; boundary=\"alt-%d\"\n\n%s"+
			"--mix-%d\nContent-Type: application/octet-stream; name=\"data%d.bin\"\nContent-Disposition: attachment; filename=\"data%d.bin\"\nContent-Transfer-Encoding: base64\n\n%s"+
			"--mix-%d--\n", i, i, i, g.alternative(i, body), i, i, i, b64(string(att)), i)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (g *generator) alternative(i int, body string) string {
	return fmt.Sprintf("--alt-%d\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n%s"+
		"--alt-%d\nContent-Type: text/html; charset=utf-8\nContent-Transfer-Encoding: base64\n\n%s--alt-%d--\n",
		i, qp(body), i, b64(g.html(body)), i)
}

// qp encodes s as quoted-printable with lines of at most 76 characters.
func qp(s string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		var enc string
		switch {
		case c == '\n':
			b.WriteByte('\n')
			n = 0
			continue
		case c == '=' || c >= 0x7f || c < ' ' || c == ' ' && (i+1 == len(s) || s[i+1] == '\n'):
			enc = fmt.Sprintf("=%02X", c)
		default:
			enc = string(c)
		}
		if n+len(enc) > 75 {
			b.WriteString("=\n")
			n = 0
		}
		b.WriteString(enc)
		n += len(enc)
	}
	return b.String()
}

// b64 encodes s as base64 in lines of 76 characters.
func b64(s string) string {
	e := base64.StdEncoding.EncodeToString([]byte(s))
	var b strings.Builder
	for len(e) > 76 {
		b.WriteString(e[:76] + "\n")
		e = e[76:]
	}
	b.WriteString(e + "\n")
	return b.String()
}
