package pipeline

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/metrics"
)

// runState is one Run's bookkeeping: what the source goroutine caches per
// table version, what has been reported once, and the checkpoint the
// commit loop last saved. Nothing here is a setting; Run (defaults)
// resets what must start empty.
type runState struct {
	// Delivery: the acknowledged prefix and the last checkpoint.
	tracker    tracker
	produceCtx context.Context
	commitMu   sync.Mutex // serialises checkpoint saves: the commit loop, saveStart, the stop
	saved      change.Position
	savedMark  atomic.Uint64 // tracker mark of saved (backfillrequests.go)
	startSaved bool          // the run's first position was saved (saveStart; source goroutine)
	backfills  backfills
	txn        *txnState // exactly once's open transaction (exactlyonce.go)
	hurry      idleHurry // at least once: the producer hurried at pauses (hurry.go)
	fail       func(error)
	finish     func() // ends the run gracefully (stop.go)

	// Per table version, on the source goroutine only.
	topics       map[string]bool
	sizeHint     map[*change.Table]int           // last key+value size per table version
	partitionIdx map[*change.Table]int           // partition column index per table version
	partition    rowPartition                    // for the row being emitted
	tableMetrics map[*change.Table]*metrics.Rows // each table's counters, resolved once

	// Reported once per table (version).
	reported    map[*change.Table]bool // table versions whose dropped columns were reported
	noColumns   tableSet               // tables without columns, reported once (reportNoColumns)
	bareUpdates tableSet               // tables with an update sent without its old row (reportBareUpdate)
}
