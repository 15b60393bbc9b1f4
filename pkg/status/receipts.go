package status

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// printReceipts writes the write receipts, one line per topic partition.
func printReceipts(w io.Writer, rs []checkpoint.Receipt) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RECEIPT TOPIC\tPARTITION\tRECORDS\tVALUE BYTES\tCRC32C\tOFFSETS")
	for _, r := range rs {
		offsets := fmt.Sprintf("%d-%d", r.FirstOffset, r.NextOffset)
		if len(r.Gaps) > 0 {
			offsets += fmt.Sprintf(" (%d gaps)", len(r.Gaps))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%08x\t%s\n", r.Topic, r.Partition, r.Records, r.Bytes, r.CRC32C, offsets)
	}
	tw.Flush()
}
