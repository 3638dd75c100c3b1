package mr

import "context"

type jobOptionsKey struct{}

// WithJobOptions returns a context carrying o as the job's options: every
// ApplyMap, ApplyMapArray and reduce call made with it (or a context
// derived from it) applies them before the options it is given, so that a
// job's modes (a -mode flag, mrrun's --mode) take effect in calls that
// pass none: the distribution and best-fit's threshold (not on a Local
// input, which is mapped where it lies), and the gather mode, root,
// transfer and node combining, a partitioned gather merged to the root so
// that the root gets the whole result. A map mode a call cannot honour
// (array for ApplyMap, element for ApplyMapArray) fails the call. Options
// a call is given replace the job's. mr/job.Run calls it with its Mode.
func WithJobOptions(ctx context.Context, o Options) context.Context {
	return context.WithValue(ctx, jobOptionsKey{}, o)
}

// JobOptionsFrom returns the job's options that WithJobOptions attached to
// ctx, if any.
func JobOptionsFrom(ctx context.Context) (Options, bool) {
	o, ok := ctx.Value(jobOptionsKey{}).(Options)
	return o, ok
}
