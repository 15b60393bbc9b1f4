package pipeline

import (
	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// restoreReceipts continues the write receipts of the checkpoint the run
// resumes from, and shows them as metrics before the first new checkpoint.
func (p *Pipeline) restoreReceipts(saved []checkpoint.Receipt) {
	if p.Producer.Receipts == nil || len(saved) == 0 {
		return
	}
	rs := make([]kafka.Receipt, len(saved))
	for i, r := range saved {
		rs[i] = kafka.Receipt(r)
	}
	p.Producer.Receipts.Restore(rs)
	p.Metrics.Receipts(saved)
}

// receipts are the producer's write receipts as the checkpoint keeps them.
func (p *Pipeline) receipts() []checkpoint.Receipt {
	acked := p.Producer.Receipts.Snapshot()
	if acked == nil {
		return nil
	}
	rs := make([]checkpoint.Receipt, len(acked))
	for i, r := range acked {
		rs[i] = checkpoint.Receipt(r)
	}
	return rs
}
