package mr_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pgasmr/pgasmr/mr"
)

// TestProcFiles: a file of /proc, which stat says is empty whatever it
// holds, is refused by name (or skipped, when asked), never read as empty.
func TestProcFiles(t *testing.T) {
	const p = "/proc/self/status"
	ctx := context.Background()
	if _, err := mr.StatRegular(p); !errors.Is(err, mr.ErrSizeUnknown) || !strings.Contains(err.Error(), p) {
		t.Errorf("StatRegular: %v", err)
	}
	if _, _, err := mr.ListFiles(ctx, []string{p}, mr.ListOptions{}); !errors.Is(err, mr.ErrSizeUnknown) {
		t.Errorf("ListFiles: %v", err)
	}
	files, skips, err := mr.ListFiles(ctx, []string{p}, mr.ListOptions{SkipUnreadable: true})
	if err != nil || len(files) != 0 || len(skips) != 1 || skips[0].Path != p {
		t.Errorf("ListFiles skipping: %v, %v, %v", files, skips, err)
	}
	if _, _, err := mr.Files(ctx, mr.FileOptions{}, p); !errors.Is(err, mr.ErrSizeUnknown) {
		t.Errorf("Files: %v", err)
	}
	// Inside a directory too.
	if _, _, err := mr.ListFiles(ctx, []string{"/proc/sys/kernel/random"}, mr.ListOptions{}); !errors.Is(err, mr.ErrSizeUnknown) {
		t.Errorf("ListFiles of a /proc directory: %v", err)
	}
}
