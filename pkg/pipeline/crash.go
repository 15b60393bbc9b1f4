package pipeline

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Crash points, for tests only: TRIBUTARY_TEST_CRASH=<point>[:<n>] makes the
// process SIGKILL itself the n-th time (default 1) it reaches <point>, so
// the integration tests can prove that a crash at exactly that moment
// loses nothing. Never set it in production.
//
//	after-produce     a record was handed to the producer, before its ack
//	after-ack         acknowledged records are about to be checkpointed
//	after-checkpoint  the checkpoint is durable, the source not told yet
//	after-txn-commit  a Kafka transaction committed (exactly_once), the
//	                  checkpoint store not written yet
const (
	crashAfterTxnCommit  = "after-txn-commit"
	crashAfterProduce    = "after-produce"
	crashAfterAck        = "after-ack"
	crashAfterCheckpoint = "after-checkpoint"
)

var (
	crashAt, crashN = parseCrash(os.Getenv("TRIBUTARY_TEST_CRASH"))
	crashSeen       atomic.Int64
)

func parseCrash(v string) (string, int64) {
	point, n, found := strings.Cut(v, ":")
	count := int64(1)
	if found {
		if c, err := strconv.ParseInt(n, 10, 64); err == nil && c > 0 {
			count = c
		}
	}
	return point, count
}

// crashPoint kills the process when the test hook names point.
func crashPoint(point string) {
	if crashAt != point || crashSeen.Add(1) < crashN {
		return
	}
	self, err := os.FindProcess(os.Getpid())
	if err == nil {
		self.Kill() // SIGKILL: no deferred function, no flush
	}
	select {}
}
