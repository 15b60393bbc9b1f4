package pipeline

import (
	"context"
	"log/slog"
	"math"
	"time"

	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source"
)

const (
	// progressEvery is how often the snapshot progress is read from the
	// source for metrics and the status record.
	progressEvery = time.Second
	// progressLogEvery is how often a running snapshot is logged.
	progressLogEvery = 5 * time.Second
	// minRateSpan is the least time a table must have been read for a
	// rate to be given: less would give a burst's rate.
	minRateSpan = 100 * time.Millisecond
)

// reportProgress reads the source's snapshot progress (source.Progresser)
// every progressEvery into the metrics (and through them the status
// record), and logs each running table every progressLogEvery and each
// finished one once, until ctx ends.
func (p *Pipeline) reportProgress(ctx context.Context) {
	t := time.NewTicker(progressEvery)
	defer t.Stop()
	var pl progressLog
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if prog, ok := p.Source.(source.Progresser); ok {
			now := time.Now()
			view := progressView(prog.SnapshotProgress(), now)
			p.Metrics.SetBackfill(view)
			pl.log(p.Log, view, now)
		}
	}
}

// progressLog logs running snapshots every progressLogEvery and each
// finished one once.
type progressLog struct {
	logged   time.Time
	finished map[string]time.Time // table -> start of the snapshot logged as done
}

func (pl *progressLog) log(log *slog.Logger, view []metrics.BackfillTable, now time.Time) {
	if pl.finished == nil {
		pl.finished = map[string]time.Time{}
	}
	logNow := now.Sub(pl.logged) >= progressLogEvery
	for _, tp := range view {
		switch {
		case tp.Done:
			if s, seen := pl.finished[tp.Table]; tp.Started.IsZero() || seen && s.Equal(tp.Started) {
				continue
			}
			pl.finished[tp.Table] = tp.Started
			log.Info("backfill: table done", "table", tp.Table, "rows", tp.Rows,
				"took", now.Sub(tp.Started).Round(time.Second).String())
		case logNow && !tp.Started.IsZero():
			attrs := []any{"table", tp.Table, "rows", tp.Rows}
			if tp.RowsPerSecond > 0 || tp.Rows == 0 {
				// One decimal: a small or slow table reads under one row a
				// second, which is not none. Left out while too early to
				// say (progressView).
				attrs = append(attrs, "rows_per_second", math.Round(tp.RowsPerSecond*10)/10)
			}
			if tp.Estimated > 0 {
				attrs = append(attrs, "estimated_rows", tp.Estimated, "percent", percent(tp.Rows, tp.Estimated))
			}
			if tp.ETASeconds > 0 {
				attrs = append(attrs, "eta", (time.Duration(tp.ETASeconds) * time.Second).String())
			}
			log.Info("backfill: progress", attrs...)
		}
	}
	if logNow {
		pl.logged = now
	}
}

// progressView adds the rate (since the snapshot started) and the time
// left at that rate to what the source reports.
func progressView(in []snapshot.TableProgress, now time.Time) []metrics.BackfillTable {
	out := make([]metrics.BackfillTable, 0, len(in))
	for _, tp := range in {
		v := metrics.BackfillTable{Table: tp.Table, Rows: tp.Rows, Estimated: tp.Estimated, Started: tp.Started, Done: tp.Done}
		if !tp.Started.IsZero() && !tp.Done {
			if el := now.Sub(tp.Started).Seconds(); el >= minRateSpan.Seconds() {
				v.RowsPerSecond = float64(tp.Rows) / el
			}
			if v.RowsPerSecond > 0 && tp.Estimated > tp.Rows {
				v.ETASeconds = float64(tp.Estimated-tp.Rows) / v.RowsPerSecond
			}
		}
		out = append(out, v)
	}
	return out
}

// percent is rows of estimated, capped at 99 until the source says done:
// statistics are estimates.
func percent(rows, estimated int64) int64 {
	return min(rows*100/max(estimated, 1), 99)
}
