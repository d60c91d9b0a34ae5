package proposal

// What the readers of an apply's records read back, and so what the writers check before they
// commit: an apply whose ledger entry, journal or copies of its versions could not be read
// back could not be recovered or reverted, so it is refused at check time, saying why. Every
// cap here has its writer's check next to its use.

import "math"

const (
	// maxVersionBytes bounds one version of a file the apply reads or keeps: the workspace's
	// file, the ledger's copy. A file over it is refused by the check (readPreimage, postimage).
	maxVersionBytes = 1 << 30
	// noPatchLimit is the limit of a patch the apply makes itself (a revert, a merge): its
	// size follows from the versions, which are capped.
	noPatchLimit = math.MaxInt64
)

// What a review reads of a proposal's summary.md and test.log; Create writes no more.
const (
	maxSummaryBytes = 1 << 20
	maxTestLogBytes = 4 << 20
)

// maxRecordBytes bounds a ledger entry and the journal. An apply is refused by the check when
// either would be larger (recordsFit). A variable for tests.
var maxRecordBytes int64 = 256 << 20
