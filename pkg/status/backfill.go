package status

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/tributary-cdc/tributary/pkg/metrics"
)

// printBackfills writes one line per table snapshot: rows so far of the
// estimated total, rate and time left.
func printBackfills(w io.Writer, tables []metrics.BackfillTable) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SNAPSHOT (r)\tSTATE\tROWS\tESTIMATED\tDONE %\tROWS/S\tETA")
	for _, t := range tables {
		state, pct, rate, eta := "running", "-", "-", "-"
		switch {
		case t.Done:
			state, pct = "done", "100"
		case t.Started.IsZero():
			state = "queued"
		}
		est := "unknown"
		if t.Estimated > 0 {
			est = fmt.Sprint(t.Estimated)
			if !t.Done {
				pct = fmt.Sprint(min(t.Rows*100/t.Estimated, 99))
			}
		}
		if t.RowsPerSecond > 0 {
			rate = fmt.Sprintf("%.0f", t.RowsPerSecond)
		}
		if t.ETASeconds > 0 {
			eta = (time.Duration(t.ETASeconds) * time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", t.Table, state, t.Rows, est, pct, rate, eta)
	}
	tw.Flush()
}
