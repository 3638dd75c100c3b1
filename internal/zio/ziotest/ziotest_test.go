package ziotest_test

import (
	"bytes"
	"compress/bzip2"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"testing"

	"github.com/pgasmr/pgasmr/internal/zio/ziotest"
)

func bzip2Inputs() map[string][]byte {
	r := rand.New(rand.NewPCG(34, 2))
	random := make([]byte, 200<<10)
	for i := range random {
		random[i] = byte(r.Uint32())
	}
	text := make([]byte, 0, 250<<10)
	for len(text) < 250<<10 {
		text = fmt.Appendf(text, "line %d of a test corpus, %c\n", r.IntN(1000), 'a'+rune(r.IntN(26)))
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	return map[string][]byte{
		"empty":  nil,
		"one":    {'x'},
		"runs":   bytes.Repeat([]byte("aaaabbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbc"), 30),
		"zeros":  make([]byte, 300<<10),
		"period": bytes.Repeat([]byte("ab"), 1000),
		"all":    all,
		"random": random,
		"text":   text,
	}
}

// TestBzip2: Bzip2's output, in one block or many, reads back with Go's
// reader, and with the bzip2 command where there is one.
func TestBzip2(t *testing.T) {
	cmd, _ := exec.LookPath("bzip2")
	for name, data := range bzip2Inputs() {
		for _, level := range []int{1, 9} {
			z := ziotest.Bzip2(data, level)
			got, err := io.ReadAll(bzip2.NewReader(bytes.NewReader(z)))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s, level %d: compress/bzip2 read %d bytes, %v; want %d bytes", name, level, len(got), err, len(data))
			}
			if cmd == "" {
				continue
			}
			c := exec.Command(cmd, "-dc")
			c.Stdin = bytes.NewReader(z)
			got, err = c.Output()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("%s, level %d: bzip2 -d read %d bytes, %v; want %d bytes", name, level, len(got), err, len(data))
			}
		}
	}
}
