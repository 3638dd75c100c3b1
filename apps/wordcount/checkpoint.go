package wordcount

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pgasmr/pgasmr/internal/checkpoint"
	"github.com/pgasmr/pgasmr/mr"
	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/reduce"
	"github.com/vmihailenco/msgpack/v5"
)

// A rank's checkpoint (Options.Checkpoint): its table is a snapshot of
// the chunks it has counted, saved with the chunks' indexes and its files'
// statuses whenever a save is due and at the end of its map. A rank that
// resumes starts from its last snapshot and skips the chunks it lists.
type rankCheckpoint struct {
	dir   string
	saver *checkpoint.Saver
	done  map[int64]bool // chunks in the table (resumed or counted)
	dirty bool           // chunks counted since the last snapshot
}

// checkpointOptions is the text of the options that shape a count's
// result, which the checkpoint's manifest holds: a change in any of them
// starts the checkpoint over.
func (o Options) checkpointOptions() string {
	return fmt.Sprintf("%+v top=%d skipUnreadable=%v chunkBytes=%d", o.Options, o.Top, o.SkipUnreadable, o.ChunkBytes)
}

// openCheckpoint is the start of a checkpointed Run on r (collective):
// the root prepares the directory for the job (making it, or clearing one
// of another job; o.CheckpointNote hears why, or that the job resumes), then every rank
// loads its snapshot into c and mine. It returns the rank's checkpoint.
func openCheckpoint(ctx context.Context, r *pgas.Rank, o Options, cs []chunk, st *reduce.Store[string, int64], c *reduce.CountTable, mine *files) (*rankCheckpoint, error) {
	dir := o.Checkpoint
	var key, failed string
	if r.ID() == o.Root {
		key, failed = prepareCheckpoint(dir, r.N(), o, cs)
	}
	// Every rank learns the manifest's key, or the root's error.
	v, err := mr.BroadcastValue(ctx, r, [2]string{key, failed}, o.Root)
	if err != nil {
		return nil, err
	}
	if key, failed = v[0], v[1]; failed != "" {
		return nil, fmt.Errorf("%s", failed)
	}
	s, ok, err := checkpoint.Load(dir, r.ID(), key)
	if err != nil {
		return nil, err
	}
	ck := &rankCheckpoint{dir: dir, done: map[int64]bool{}}
	if ok {
		if err := ck.load(st, s, c, mine); err != nil {
			return nil, err
		}
		for _, i := range s.Done {
			if i < 0 || i >= int64(len(cs)) {
				return nil, fmt.Errorf("checkpoint %s: rank %d's state names chunk %d of %d; remove the directory to start over", dir, r.ID(), i, len(cs))
			}
			ck.done[i] = true
		}
	} else {
		s = checkpoint.State{}
	}
	ck.saver = checkpoint.NewSaver(dir, r.ID(), key, s)
	if saveAlways {
		ck.saver.Every, ck.saver.Ratio = 0, 0
	}
	return ck, nil
}

// Test hooks: saveAlways saves a snapshot after every chunk, and
// afterSave, if not nil, is called after each save (on the rank's
// goroutine).
var (
	saveAlways bool
	afterSave  func()
)

// prepareCheckpoint readies the directory on the root: the manifest's key,
// or the error's text.
func prepareCheckpoint(dir string, ranks int, o Options, cs []chunk) (key, failed string) {
	var paths []string
	for _, c := range cs {
		if c.firstChunk {
			paths = append(paths, c.path)
		}
	}
	m, err := checkpoint.NewManifest("wordcount", o.checkpointOptions(), ranks, paths)
	if err != nil {
		return "", err.Error()
	}
	resumed, started, err := checkpoint.Prepare(dir, m)
	if err != nil {
		return "", err.Error()
	}
	if resumed {
		started = fmt.Sprintf("checkpoint %s: resuming an earlier run of this count", dir)
	}
	if started != "" && o.CheckpointNote != nil {
		o.CheckpointNote(started)
	}
	return m.Key(), ""
}

// load puts snapshot s into the empty table c and mine.
func (ck *rankCheckpoint) load(st *reduce.Store[string, int64], s checkpoint.State, c *reduce.CountTable, mine *files) error {
	if err := msgpack.Unmarshal(s.Side, mine); err != nil {
		return fmt.Errorf("checkpoint %s: rank %d's file statuses: %w; remove the directory to start over", ck.dir, s.Rank, err)
	}
	path := s.RunPath(ck.dir)
	if path == "" {
		return nil
	}
	rd, err := st.OpenFile(path)
	if err != nil {
		return fmt.Errorf("checkpoint: %w; remove the directory to start over", err)
	}
	defer rd.Close()
	run, err := st.ReadAll(rd)
	if err != nil {
		return fmt.Errorf("checkpoint: %w; remove the directory to start over", err)
	}
	// The commonest words first, as counting would have put them: the
	// table's slots favour the keys it took first, and a table filled in
	// the snapshot's alphabetical order made the rest of the map count
	// half as fast again.
	order := make([]int, len(run.Keys))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(run.Vals[b], run.Vals[a]) })
	for _, i := range order {
		c.AddN(run.Keys[i], run.Vals[i])
	}
	return nil
}

// todo returns the chunks of cs that no rank's snapshot holds, in order
// (collective): a resumed job spreads what is left over all the ranks
// afresh, as its options distribute, so that a rank killed early does not
// make the rerun wait for its share alone. Each rank reports the chunks
// its own snapshot holds as progress done. Snapshots that share a chunk
// are an error: the chunk would count twice.
func (ck *rankCheckpoint) todo(ctx context.Context, r *pgas.Rank, cs []chunk) ([]chunk, error) {
	mine := make([]int64, 0, len(ck.done))
	for i := range ck.done {
		mine = append(mine, i)
	}
	slices.Sort(mine)
	all, err := mr.AllGatherValues(ctx, r, mine)
	if err != nil {
		return nil, err
	}
	owner := make(map[int64]int, len(cs))
	for q, done := range all {
		for _, i := range done {
			if p, ok := owner[i]; ok {
				return nil, fmt.Errorf("checkpoint %s: ranks %d and %d both hold chunk %d; remove the directory to start over", ck.dir, p, q, i)
			}
			owner[i] = q
		}
	}
	p := mr.ProgressFrom(ctx)
	var todo []chunk
	for i, c := range cs {
		q, done := owner[int64(i)]
		switch {
		case !done:
			todo = append(todo, c)
		case q == r.ID():
			var last int64
			if c.off+c.n == c.size {
				last = 1
			}
			p.Add(last, c.n)
		}
	}
	return todo, nil
}

// counted notes that chunk i is in the table, and saves a snapshot if one
// is due (or final: the rank's map is over).
func (ck *rankCheckpoint) counted(i int64, st *reduce.Store[string, int64], c *reduce.CountTable, mine files, final bool) error {
	if ck == nil {
		return nil
	}
	if i >= 0 {
		ck.done[i] = true
		ck.dirty = true
	}
	if !ck.dirty || !final && !ck.saver.Due() {
		return nil
	}
	ck.dirty = false
	done := make([]int64, 0, len(ck.done))
	for i := range ck.done {
		done = append(done, i)
	}
	slices.Sort(done)
	side, err := msgpack.Marshal(mine)
	if err != nil {
		return err
	}
	snapshot := func() func(string) error {
		run := c.Run() // a sorted copy: the table counts on while it is written
		return func(path string) error { return st.WriteFile(path, reduce.ReadRun(run)) }
	}
	if final {
		err = ck.saver.Save(done, side, snapshot)
	} else {
		err = ck.saver.Start(done, side, snapshot)
	}
	if err == nil && afterSave != nil {
		afterSave()
	}
	return err
}

// wait waits for the rank's save that runs in the background, if any:
// Run does not return while one writes to the directory.
func (ck *rankCheckpoint) wait() {
	if ck == nil {
		return
	}
	ck.saver.Wait()
}

// errNoCheckpoint is the error of a baseline asked to checkpoint.
func errNoCheckpoint(baseline string) error {
	return fmt.Errorf("wordcount: %s does not keep checkpoints (Options.Checkpoint); Run does", baseline)
}

// checkpointOutsideInputs refuses a checkpoint directory dir that is one
// of paths or lies inside one: a rerun would list its files as input and
// count them.
func checkpointOutsideInputs(dir string, paths []string) error {
	if dir == "" {
		return nil
	}
	d := resolved(dir)
	for _, p := range paths {
		in := resolved(p)
		if d == in || strings.HasPrefix(d, strings.TrimSuffix(in, string(filepath.Separator))+string(filepath.Separator)) {
			return fmt.Errorf("wordcount: checkpoint %s is inside input %s: its files would be counted; put it elsewhere", dir, p)
		}
	}
	return nil
}

// resolved is path made absolute with the links of its longest existing
// prefix resolved.
func resolved(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	rest := ""
	for p := abs; ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return abs
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}
