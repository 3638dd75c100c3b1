package spamcount

import (
	"bufio"
	"context"
	"encoding/base64"
	"maps"
	"slices"
	"strings"
	"testing"
)

// wrap64 base64-encodes s in lines of 76 characters.
func wrap64(s string) string {
	e := base64.StdEncoding.EncodeToString([]byte(s))
	var b strings.Builder
	for len(e) > 76 {
		b.WriteString(e[:76] + "\r\n")
		e = e[76:]
	}
	b.WriteString(e + "\r\n")
	return b.String()
}

// handMessage is a message with its counts worked out by hand.
type handMessage struct {
	name      string
	raw       string
	want      map[string]int64 // occurrences of listed words
	malformed bool
}

var handMessages = []handMessage{
	{
		name: "plain",
		raw: "From: a@b.example\nTo: d@e.example\nSubject: Hello friend\n\n" +
			"Dear friend, FREE money! Click here: free, Free; click.\n",
		want: map[string]int64{"free": 3, "money": 1, "click": 2},
	},
	{
		name: "quoted-printable",
		raw: "Subject: meeting\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: quoted-printable\n\n" +
			"You are a win=\nner! Claim your =70rize now=3D\nVi=41gra=20\ncash  \r\nfr=\r\nee=\n",
		// winner, claim, prize, now, viagra, cash, free
		want: map[string]int64{"winner": 1, "claim": 1, "prize": 1, "now": 1, "viagra": 1, "cash": 1, "free": 1},
	},
	{
		name: "base64",
		raw: "Subject: notice\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: BASE64\r\n\r\n" +
			wrap64("Your password expired. Verify your ACCOUNT, your password! "+strings.Repeat("filler text ", 10)),
		want: map[string]int64{"password": 2, "verify": 1, "account": 1},
	},
	{
		name: "alternative",
		raw: "Subject: hi\nMIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"XYZ\"\n\n" +
			"preamble free free\n" +
			"--XYZ\nContent-Type: text/plain\n\nGet cash now\n" +
			"--XYZ\nContent-Type: text/html\nContent-Transfer-Encoding: quoted-printable\n\n" +
			"<html><body><p class=3D\"free\">Get <b>cash</b> n&#111;w</p><a href=3D\"http://click.example\">unsub&shy;</a>&amp;bitcoin<!-- spam spam --></body></html>\n" +
			"--XYZ--\nepilogue free\n",
		// text: cash, now; html: cash, now (n&#111;w), bitcoin; tags, comment, preamble and epilogue ignored
		want: map[string]int64{"cash": 2, "now": 2, "bitcoin": 1},
	},
	{
		name: "nested",
		raw: "Subject: report\nContent-Type: multipart/mixed; boundary=outer\n\n" +
			"--outer\nContent-Type: multipart/alternative; boundary=inner\n\n" +
			"--inner\nContent-Type: text/plain; charset=us-ascii\n\nA trojan here.\n" +
			"--inner\nContent-Type: text/html\n\n<i>trojan</i>&nbsp;RANSOMWARE<br>\n" +
			"--inner--\n" +
			"--outer\nContent-Type: application/octet-stream; name=x.bin\nContent-Disposition: attachment\nContent-Transfer-Encoding: base64\n\n" +
			wrap64("free free free virus") +
			"--outer\nContent-Type: image/png\n\nfree click\n" +
			"--outer\nContent-Type: text/plain\n\nmalware\n" +
			"--outer--\n",
		want: map[string]int64{"trojan": 2, "ransomware": 1, "malware": 1},
	},
	{
		name: "encoded subject",
		raw: "Subject: =?UTF-8?B?" + base64.StdEncoding.EncodeToString([]byte("Winner: free Bitcoin")) + "?= and\n" +
			" =?iso-8859-1?Q?cr=E9dit_lottery?= or =?x-unknown?Q?spam_scam?=\n\nplain body scam\n",
		// "crédit" is one word, not "credit"; the unknown charset keeps its bytes
		want: map[string]int64{"winner": 1, "free": 1, "bitcoin": 1, "lottery": 1, "spam": 1, "scam": 2},
	},
	{
		name: "bad header",
		raw:  "This is not a header line\nfree click\n",
		want: map[string]int64{"free": 1, "click": 1}, // the raw text
		// not a header: counted raw
		malformed: true,
	},
	{
		name: "bad base64",
		raw:  "Subject: x\nContent-Transfer-Encoding: base64\n\n!!free!!\n",
		want: map[string]int64{"free": 1}, malformed: true,
	},
	{
		name: "multipart without boundary",
		raw:  "Subject: virus\nContent-Type: multipart/mixed\n\n--b\nContent-Type: text/plain\n\nworm\n--b--\n",
		// subject, then the raw body: "b", "content", "type", "text", "plain", "worm", "b"
		want: map[string]int64{"virus": 1, "worm": 1}, malformed: true,
	},
	{
		name: "no closing boundary",
		raw:  "Subject: x\nContent-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/plain\n\nworm\n--b\nContent-Type: text/html\n\n<b>spam</b>",
		want: map[string]int64{"worm": 1, "spam": 1}, malformed: true,
	},
	{
		name: "invalid utf-8 and unicode",
		raw:  "Subject: x\n\nfree\xffclick ＦＲＥＥ FREE\xc3\x28spam Ünsubscribe naïve ΚΛΙΚ\n",
		// invalid bytes separate words; "ＦＲＥＥ" lower-cases to "ｆｒｅｅ", not "free"
		want: map[string]int64{"free": 2, "click": 1, "spam": 1},
	},
	{
		name: "empty",
		raw:  "",
		want: map[string]int64{},
	},
}

// countOne decodes and counts one raw message with the built-in words.
func countOne(t testing.TB, raw string) (map[string]int64, bool) {
	words := DefaultWords()
	c := newCounter(words)
	got := map[string]int64{}
	var msgs counts
	err := c.count(context.Background(), []byte(raw), func(k int32, v counts) {
		if int(k) == len(words) {
			msgs = add2(msgs, v)
			return
		}
		if v[1] != 1 || v[0] < 1 {
			t.Errorf("emit(%s, %v): want one message with occurrences ≥ 1", words[k], v)
		}
		got[words[k]] += v[0]
	})
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0] != 1 {
		t.Errorf("message count %d; want 1", msgs[0])
	}
	return got, msgs[1] == 1
}

func TestHandMessages(t *testing.T) {
	for _, m := range handMessages {
		t.Run(m.name, func(t *testing.T) {
			got, bad := countOne(t, m.raw)
			if !maps.Equal(got, m.want) {
				t.Errorf("counts = %v; want %v", got, m.want)
			}
			if bad != m.malformed {
				t.Errorf("malformed = %v; want %v", bad, m.malformed)
			}
		})
	}
}

func TestDecodeQP(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a=3Db", "a=b"},
		{"a=3db", "a=b"},
		{"soft=\nbreak", "softbreak"},
		{"soft=  \r\nbreak", "softbreak"},
		{"trailing  \nspace\t\r\n", "trailing\nspace\r\n"},
		{"inner  space", "inner  space"},
		{"bad=G1 end=", "bad=G1 end"},
		{"=4", "=4"},
	} {
		if got := string(decodeQP([]byte(c.in))); got != c.want {
			t.Errorf("decodeQP(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func TestStripHTML(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a<b>c</b>d", "a c d"},
		{"1 < 2 &lt; 3 &AMP; &#x41;&#66;", "1 < 2 < 3 & AB"},
		{"x<!-- <b> -->y", "x y"},
		{"&unknown; &#99999999; &;", "&unknown; &#99999999; &;"},
		{"open <a href", "open  "},
	} {
		if got := string(stripHTML([]byte(c.in))); got != c.want {
			t.Errorf("stripHTML(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range handMessages {
		f.Add([]byte(m.raw))
	}
	words := DefaultWords()
	f.Fuzz(func(t *testing.T, raw []byte) {
		c := newCounter(words)
		var total counts
		err := c.count(context.Background(), raw, func(k int32, v counts) {
			if k < 0 || int(k) > len(words) {
				t.Fatalf("emit of key %d", k)
			}
			if int(k) == len(words) {
				total = add2(total, v)
			} else if v[0] < 1 || v[1] != 1 {
				t.Fatalf("emit(%d, %v)", k, v)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if total[0] != 1 {
			t.Fatalf("message count %d", total[0])
		}
	})
}

// naiveMbox splits an mbox in memory: the oracle of splitMbox.
func naiveMbox(data string) []Message {
	var msgs []Message
	var off int64
	start := int64(-1)
	prevEmpty := true
	for len(data) > 0 {
		n := strings.IndexByte(data, '\n') + 1
		if n == 0 {
			n = len(data)
		}
		line := data[:n]
		if prevEmpty && strings.HasPrefix(line, "From ") {
			if start >= 0 {
				msgs = append(msgs, Message{Off: start, Len: off - start})
			}
			start = off + int64(n)
			prevEmpty = false
		} else {
			prevEmpty = line == "\n" || line == "\r\n"
		}
		off += int64(n)
		data = data[n:]
	}
	if start >= 0 {
		msgs = append(msgs, Message{Off: start, Len: off - start})
	}
	return msgs
}

func FuzzSplitMbox(f *testing.F) {
	f.Add(mbox)
	f.Add("From a\n\nFrom b\nFrom c\n\n\nFrom " + strings.Repeat("x", 40) + "\nbody\n\r\nFrom d")
	f.Fuzz(func(t *testing.T, body string) {
		data := "From " + body
		got, err := splitMbox(context.Background(), bufio.NewReaderSize(strings.NewReader(data), 16))
		if err != nil {
			t.Fatal(err)
		}
		if want := naiveMbox(data); !slices.Equal(got, want) {
			t.Fatalf("splitMbox(%q) = %v; want %v", data, got, want)
		}
	})
}
