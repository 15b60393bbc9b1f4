package pipeline

import "github.com/tributary-cdc/tributary/pkg/checkpoint"

// restoreReceipts continues the write receipts of the checkpoint the run
// resumes from, and shows them as metrics before the first new checkpoint.
func (p *Pipeline) restoreReceipts(saved []checkpoint.Receipt) {
	if p.Producer.Receipts == nil || len(saved) == 0 {
		return
	}
	p.Producer.Receipts.Restore(saved)
	p.Metrics.Receipts(saved)
}
