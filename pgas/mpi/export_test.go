//go:build mpi || mpich

package mpi

// Exported for the tests in package mpi_test.
var (
	RawPutLoop        = rawPutLoop
	RawGetLoop        = rawGetLoop
	RawAllgathervLoop = rawAllgathervLoop
	RawInit           = rawInit
	RawFinalized      = rawFinalized
	RawFinalize       = rawFinalize
)

// Flavour names the MPI library the package was built for.
const Flavour = flavour

// LargeCalls counts the collectives of t carried as point-to-point
// transfers in chunks.
func LargeCalls(t *Transport) int64 { return t.largeCalls.Load() }
