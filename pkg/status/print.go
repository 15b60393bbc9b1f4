package status

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// Print writes r for a person: a header of key facts, then one line per
// table.
func Print(w io.Writer, r Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	row("pipeline", "%s", r.Pipeline)
	row("state", "%s", r.State)
	switch {
	case r.Epoch > 0 && r.Owner == "":
		row("owner", "none: the lease is released (epoch %d)", r.Epoch)
	case r.Epoch > 0:
		row("owner", "%s (epoch %d)", r.Owner, r.Epoch)
	case r.Owner != "":
		row("owner", "%s", r.Owner)
	}
	if c := r.Checkpoint; c != nil {
		if c.Summary != "" {
			row("position", "%s", c.Summary)
		} else {
			row("position", "%s", c.Position)
		}
		row("checkpoint saved", "%s (%s ago)", c.SavedAt.UTC().Format(time.RFC3339), round(c.AgeSeconds))
	} else {
		row("position", "none: no checkpoint yet")
	}
	switch {
	case r.LagBytes != nil:
		row("lag (log)", "%d bytes of source log after the checkpoint", *r.LagBytes)
	case r.LagBytesError != "":
		row("lag (log)", "unknown: %s", r.LagBytesError)
	}
	if b := r.Backfill; b != nil {
		switch {
		case b.Done:
			row("backfill", "done")
		case b.Table != "":
			row("backfill", "reading %s (%d rows so far; tables done: %s)", b.Table, b.Rows, list(b.TablesDone))
		default:
			row("backfill", "in progress")
		}
	}
	if q := r.BackfillRequested; q != nil && !q.Empty() {
		what := list(q.Tables)
		if q.All {
			what = "every table"
		}
		row("backfill requested", "%s (waiting for the pipeline to take it)", what)
	}
	if l := r.Live; l != nil {
		label := "running since"
		if r.State != StateRunning {
			label = "last run started"
		}
		row(label, "%s (version %s, %s)", l.StartedAt.UTC().Format(time.RFC3339), l.Version, l.Owner)
		if c := l.Source; c != nil && r.State == StateRunning {
			sourceRows(row, c, l.UpdatedAt)
		}
		if r.State == StateRunning {
			row("lag", "%s behind the source", round(l.LagSeconds))
		} else {
			row("last seen", "%s", l.UpdatedAt.UTC().Format(time.RFC3339))
		}
		row("rows since start", "%s", ops(l.Rows))
		row("skipped rows", "%d", l.SkippedRows)
		for _, s := range l.Skipped {
			row("  skipped", "%s %s: %d bytes, %s", s.At.UTC().Format(time.RFC3339), s.Table, s.SizeBytes, s.Reason)
		}
		if len(l.MissingTables) > 0 {
			row("missing tables", "%s (listed in source.tables, not in the database: dropped, renamed away or not created yet; captured if they appear)", list(l.MissingTables))
		}
		if e := l.LastError; e != nil {
			row("last error", "%s %s", e.At.UTC().Format(time.RFC3339), e.Message)
		} else {
			row("last error", "none")
		}
	}
	tw.Flush()
	printReceipts(w, r.Receipts)
	if r.Live != nil && len(r.Live.Tables) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TABLE\tBACKFILLED (r)\tINSERTS (c)\tUPDATES (u)\tDELETES (d)")
		for _, t := range r.Live.Tables {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\n", t.Table, t.Rows["r"], t.Rows["c"], t.Rows["u"], t.Rows["d"])
		}
		tw.Flush()
	}
	if r.Live != nil && len(r.Live.Backfills) > 0 {
		fmt.Fprintln(w)
		printBackfills(w, r.Live.Backfills)
	}
}

func round(seconds float64) time.Duration {
	return (time.Duration(seconds * float64(time.Second))).Round(100 * time.Millisecond)
}

func list(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

func ops(rows map[string]uint64) string {
	keys := make([]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, rows[k]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// sourceRows prints the source connection: how long it has streamed, or
// how long it has been reconnecting, after how many attempts and why.
func sourceRows(row func(k, format string, args ...any), c *source.ConnState, now time.Time) {
	since := fmt.Sprintf("since %s (%s)", c.Since.UTC().Format(time.RFC3339), now.Sub(c.Since).Round(time.Second))
	switch c.State {
	case source.ConnReconnecting:
		row("source", "RECONNECTING %s, %d failed attempts, outage window %s", since, c.Attempts, c.OutageWindow)
	case source.ConnStreaming:
		row("source", "%s %s", c.State, since)
	default:
		row("source", "%s", c.State)
	}
	if c.LastError != "" {
		row("source error", "%s %s (%s)", c.LastErrorAt.UTC().Format(time.RFC3339), c.LastError, c.LastErrorClass)
	}
}
