package status

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/source"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// recentSkipped is how many skipped rows a snapshot keeps.
const recentSkipped = 20

// Recorder is a running pipeline's Live view: metrics it reads, plus the
// errors and skipped rows it is told about. Safe for concurrent use.
type Recorder struct {
	m *metrics.Pipeline

	mu      sync.Mutex
	live    Live
	stopped bool
	conn    func() source.ConnState
}

// WatchSource makes every snapshot carry the source connection's state
// (capture.Capture.State).
func (r *Recorder) WatchSource(state func() source.ConnState) {
	r.mu.Lock()
	r.conn = state
	r.mu.Unlock()
}

// NewRecorder starts the Live view of the process that runs the pipeline.
func NewRecorder(m *metrics.Pipeline, version string) *Recorder {
	host, _ := os.Hostname()
	return &Recorder{m: m, live: Live{
		Version:   version,
		Owner:     fmt.Sprintf("%d@%s", os.Getpid(), host),
		StartedAt: time.Now().UTC(),
	}}
}

// Failed records the error the pipeline stopped on.
func (r *Recorder) Failed(err error) {
	if err == nil {
		return
	}
	r.mu.Lock()
	r.live.LastError = &Failure{At: time.Now().UTC(), Message: err.Error()}
	r.mu.Unlock()
}

// Stopped marks the process as ended: the next snapshot says so.
func (r *Recorder) Stopped() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

// Snapshot returns the Live view as of now.
func (r *Recorder) Snapshot() Live {
	r.mu.Lock()
	l := r.live
	l.Skipped = append([]Skipped(nil), r.live.Skipped...)
	l.Stopped = r.stopped
	conn := r.conn
	r.mu.Unlock()
	if conn != nil {
		st := conn()
		l.Source = &st
	}
	l.UpdatedAt = time.Now().UTC()
	l.LagSeconds = r.m.Lag().Seconds()
	l.Rows = r.m.Published()
	l.Tables = r.m.Tables()
	l.Backfills = r.m.Backfills()
	return l
}

// Notifier wraps a row.skipped notifier so that each skipped row is also
// counted and kept among the recent ones.
func (r *Recorder) Notifier(next webhook.Notifier) webhook.Notifier {
	return skipCounter{r: r, next: next}
}

type skipCounter struct {
	r    *Recorder
	next webhook.Notifier
}

func (s skipCounter) Notify(ctx context.Context, ev webhook.RowSkipped) error {
	s.r.mu.Lock()
	s.r.live.SkippedRows++
	s.r.live.Skipped = append(s.r.live.Skipped, Skipped{At: ev.Time, Table: ev.Table, SizeBytes: ev.SizeBytes, Reason: ev.Reason})
	if n := len(s.r.live.Skipped); n > recentSkipped {
		s.r.live.Skipped = s.r.live.Skipped[n-recentSkipped:]
	}
	s.r.mu.Unlock()
	return s.next.Notify(ctx, ev)
}
