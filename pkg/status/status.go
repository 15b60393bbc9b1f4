// Package status describes a pipeline for people: its state and owner, its
// checkpoint, how far behind the source it is, per-table progress, rows per
// op since start, the last error and the rows it skipped. `tributary status`
// prints it, the status page and /status.json serve it; both read it
// without taking the pipeline over (no lock, no lease).
//
// A running pipeline keeps a Live snapshot beside its checkpoint (a file,
// or an item of the DynamoDB checkpoint table) and refreshes it every
// Interval; a reader that finds it fresh says "running".
package status

import (
	"encoding/json"
	"time"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Interval is how often a running pipeline refreshes its Live snapshot.
const Interval = 2 * time.Second

// staleAfter is how old a Live snapshot may be before the pipeline is
// taken for stopped: a few missed refreshes, not one slow disk.
const staleAfter = 5 * Interval

// States of a pipeline.
const (
	StateRunning = "running" // a fresh Live snapshot
	StateStopped = "stopped" // a checkpoint, and no fresh snapshot
	StateNew     = "new"     // neither: it never ran
)

// Report is what `status --json` prints and /status.json serves.
type Report struct {
	Pipeline string `json:"pipeline"`
	State    string `json:"state"`
	// Owner and Epoch name who holds the pipeline: the DynamoDB lease
	// holder and its fencing epoch, or the process (pid@host) of the file
	// store's lock.
	Owner string `json:"owner,omitempty"`
	Epoch int64  `json:"epoch,omitempty"`

	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
	// LagBytes is how much source log (PostgreSQL WAL, MySQL binlog) lies
	// between the checkpoint and the server's current end; `status` asks
	// the source for it, the status page does not. LagBytesError says why
	// it is missing when the source could not tell.
	LagBytes      *int64 `json:"lag_bytes,omitempty"`
	LagBytesError string `json:"lag_bytes_error,omitempty"`
	// Backfill is the progress recorded in the checkpoint's position.
	Backfill *Backfill `json:"backfill,omitempty"`
	// BackfillRequested is a request (`tributary backfill`, the API)
	// waiting in the checkpoint store for the pipeline to take it.
	BackfillRequested *checkpoint.Request `json:"backfill_requested,omitempty"`
	// Receipts are the write receipts saved with the checkpoint: per topic
	// partition, the records, value bytes and CRC32C acknowledged.
	Receipts []checkpoint.Receipt `json:"receipts,omitempty"`
	// Live is the running (or last) process's own view; nil when the
	// pipeline never ran with this version.
	Live *Live `json:"live,omitempty"`
}

// Checkpoint is the durable position.
type Checkpoint struct {
	Position json.RawMessage `json:"position"`
	// Summary is Position in words (position.go): "LSN 0/1A2B3C4 (slot
	// tributary_shop)", "binlog mysql-bin.000042:1234, GTID set 0-1-77".
	Summary    string    `json:"summary,omitempty"`
	SavedAt    time.Time `json:"saved_at"`
	AgeSeconds float64   `json:"age_seconds"`
}

// Backfill is what the position says of the backfill.
type Backfill struct {
	Done       bool     `json:"done"`
	Table      string   `json:"table,omitempty"`       // the table being read
	Rows       int64    `json:"rows,omitempty"`        // rows read so far over all tables (PostgreSQL)
	TablesDone []string `json:"tables_done,omitempty"` // tables finished (PostgreSQL)
}

// Live is what the running process knows and the checkpoint does not.
type Live struct {
	Version   string    `json:"version"`
	Owner     string    `json:"owner"` // pid@host
	StartedAt time.Time `json:"started_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// LagSeconds is now minus the source commit time of the newest change
	// not yet acknowledged by Kafka; 0 when caught up.
	LagSeconds float64 `json:"lag_seconds"`
	// Rows is rows acknowledged per op (c, u, d, r) since start.
	Rows   map[string]uint64   `json:"rows"`
	Tables []metrics.TableRows `json:"tables"`
	// Backfills is each table's snapshot (op r) as the source reports it:
	// rows so far, the estimated total, rate and time left.
	Backfills []metrics.BackfillTable `json:"backfills,omitempty"`
	// SkippedRows counts row.skipped events since start; Skipped holds the
	// most recent ones (no key values: they may be personal data).
	SkippedRows int64     `json:"skipped_rows"`
	Skipped     []Skipped `json:"recent_skipped,omitempty"`
	LastError   *Failure  `json:"last_error,omitempty"`
	// Source is the source connection: streaming, or reconnecting since
	// when, after how many attempts and which error.
	Source *source.ConnState `json:"source,omitempty"`
	// MissingTables are source.tables entries that match no table now
	// (dropped, renamed away, or not created yet): a warning, not an error.
	MissingTables []string `json:"missing_tables,omitempty"`
	// Stopped is set when the process has ended.
	Stopped bool `json:"stopped,omitempty"`
}

// Skipped is one row too large to publish.
type Skipped struct {
	At        time.Time `json:"at"`
	Table     string    `json:"table"`
	SizeBytes int       `json:"size_bytes"`
	Reason    string    `json:"reason"`
}

// Failure is an error the pipeline stopped or retried on.
type Failure struct {
	At      time.Time `json:"at"`
	Message string    `json:"message"`
}

// Build joins what a reader found: the checkpoint (found false: none) and
// the Live snapshot (nil: none), as of now. words puts the checkpoint's
// position in words (its source type's source.Kind.Summary; nil: none).
func Build(pipeline string, cp checkpoint.Checkpoint, found bool, live *Live, now time.Time, words func(pos []byte) string) Report {
	r := Report{Pipeline: pipeline, State: StateNew, Live: live, Owner: cp.Owner, Epoch: cp.Epoch}
	if found {
		r.State = StateStopped
		r.Checkpoint = &Checkpoint{
			Position:   json.RawMessage(cp.Position),
			Summary:    positionSummary(cp.Position, words),
			SavedAt:    cp.UpdatedAt,
			AgeSeconds: now.Sub(cp.UpdatedAt).Seconds(),
		}
		r.Backfill = backfillOf(cp.Position)
		r.Receipts = cp.Receipts
	}
	if live != nil && !live.Stopped && now.Sub(live.UpdatedAt) < staleAfter {
		r.State = StateRunning
		if r.Owner == "" {
			r.Owner = live.Owner
		}
	}
	return r
}

// backfillOf reads the backfill fields the sources put in their
// positions: backfilled and the capture engine's snapshot state
// (snapshot.{tables,done}); positions of earlier releases carry table
// and, for PostgreSQL, backfill.{table,rows,done}.
func backfillOf(pos []byte) *Backfill {
	var p struct {
		Backfilled *bool  `json:"backfilled"`
		Table      string `json:"table"`
		Backfill   *struct {
			Table string   `json:"table"`
			Rows  int64    `json:"rows"`
			Done  []string `json:"done"`
		} `json:"backfill"`
		Snapshot *struct {
			Tables []struct {
				Table   string `json:"table"`
				Rows    int64  `json:"rows"`
				Started int64  `json:"started"`
			} `json:"tables"`
			Done []string `json:"done"`
		} `json:"snapshot"`
	}
	if json.Unmarshal(pos, &p) != nil || p.Backfilled == nil {
		return nil
	}
	b := &Backfill{Done: *p.Backfilled, Table: p.Table}
	if p.Backfill != nil {
		b.Table, b.Rows, b.TablesDone = p.Backfill.Table, p.Backfill.Rows, p.Backfill.Done
	}
	if s := p.Snapshot; s != nil {
		b.Done = b.Done && len(s.Tables) == 0
		b.TablesDone = s.Done
		for _, t := range s.Tables {
			b.Rows += t.Rows
			if b.Table == "" && t.Started != 0 {
				b.Table = t.Table
			}
		}
	}
	return b
}
