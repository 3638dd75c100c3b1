// Package launch lets one SPMD program run unchanged in one process and as
// one process per rank: FromEnv looks at the environment a launcher left
// and returns the pgas.Config of the job this process is part of.
//
//	func main() {
//		cfg, err := launch.FromEnv(pgas.Config{Ranks: 4})
//		if err != nil {
//			log.Fatal(err)
//		}
//		err = pgas.Run(ctx, cfg, body)
//		...
//	}
//
// Run directly, the program runs cfg as given (4 in-process ranks); started
// by `mrrun exec --transport shm -np N -- ./prog` (or any shm.Launch), each
// process runs its one rank of N over the shared-memory transport.
package launch

import (
	"fmt"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/shm"
)

// Launched says which launcher started this process as a rank: "shm", or
// "" when it was not started as one.
func Launched() (string, error) {
	_, ok, err := shm.FromEnv()
	if err != nil {
		return "", err
	}
	if ok {
		return "shm", nil
	}
	return "", nil
}

// FromEnv returns cfg adjusted to the job a launcher started this process
// in: its transport, its number of ranks, and a segment size within what
// the launcher reserved (cfg's, if it fits; an error if it asks for more).
// When no launcher started the process, cfg is returned unchanged.
func FromEnv(cfg pgas.Config) (pgas.Config, error) {
	tr, ok, err := shm.FromEnv()
	if err != nil {
		return cfg, fmt.Errorf("launch: %w", err)
	}
	if !ok {
		return cfg, nil
	}
	cfg.Transport = tr
	cfg.Ranks = tr.Size()
	switch {
	case cfg.SegmentBytes == 0:
		cfg.SegmentBytes = min(tr.SegmentBytes(), pgas.DefaultSegmentBytes)
	case cfg.SegmentBytes > tr.SegmentBytes():
		return cfg, fmt.Errorf("launch: the job asks for %d-byte segments but the shm launcher reserved %d per rank", cfg.SegmentBytes, tr.SegmentBytes())
	}
	return cfg, nil
}

// Leader says whether this process hosts rank 0 of cfg's job: true in one
// process (inproc hosts every rank), and in the rank-0 process of a
// launched job. Programs print their report only on the leader.
func Leader(cfg pgas.Config) bool {
	if r, ok := cfg.Transport.(interface{ Rank() int }); ok {
		return r.Rank() == 0
	}
	return true
}
