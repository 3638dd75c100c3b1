package spamcount_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pgasmr/pgasmr/apps/spamcount"
	"github.com/pgasmr/pgasmr/distrib"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
)

// Two messages counted on two in-process ranks with a three-word list;
// the result is on the root.
func ExampleRun() {
	dir, err := os.MkdirTemp("", "spamcount")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	files := map[string]string{
		"words.txt": "free\nwinner\nbitcoin\n",
		"mail/1.eml": "Subject: You are a WINNER\nContent-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\n\n" +
			"Claim your fr=\nee prize: free=3Dfree\n",
		"mail/2.eml": "Subject: =?UTF-8?B?QmVzdCBiaXRjb2luIGRlYWw=?=\nContent-Type: text/html\n\n<p>Buy <b>bitcoin</b>&nbsp;now</p>\n",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fmt.Println(err)
			return
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			fmt.Println(err)
			return
		}
	}
	o := spamcount.Options{Options: mr.Options{Dist: distrib.Balanced, Gather: reduce.GatherPartitioned}, WordsFile: filepath.Join(dir, "words.txt")}
	err = pgas.Run(context.Background(), pgas.Config{Ranks: 2}, func(ctx context.Context, r *pgas.Rank) error {
		res, err := spamcount.Run(ctx, r, []string{filepath.Join(dir, "mail")}, o)
		if err != nil || res == nil {
			return err
		}
		fmt.Println("messages:", res.Messages)
		return res.Write(os.Stdout, "text")
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// messages: 2
	// word     occurrences  messages
	// free               3         1
	// winner             1         1
	// bitcoin            2         1
}
