package metrics

import (
	"strconv"
	"sync"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// Names of the write receipt metrics.
const (
	receiptRecordsName = "tributary_receipt_records_total"
	receiptBytesName   = "tributary_receipt_bytes_total"
	receiptCRCName     = "tributary_receipt_crc32c"
)

// receipts holds the last saved write receipts, per topic and partition.
type receipts struct {
	mu sync.Mutex
	by map[string]*checkpoint.Receipt // topic + "/" + partition
}

// Receipts publishes the write receipts saved with the latest checkpoint
// (checkpoint.Receipt): records and value bytes acknowledged, and the
// CRC32C of the values, per topic and partition. They move only when a
// checkpoint is saved, so they always match `tributary status`.
func (m *Pipeline) Receipts(rs []checkpoint.Receipt) {
	if m == nil {
		return
	}
	m.receipts.mu.Lock()
	defer m.receipts.mu.Unlock()
	if m.receipts.by == nil {
		m.receipts.by = map[string]*checkpoint.Receipt{}
	}
	for _, r := range rs {
		part := strconv.Itoa(int(r.Partition))
		k := r.Topic + "/" + part
		cur := m.receipts.by[k]
		if cur != nil {
			*cur = r
			continue
		}
		cur = &checkpoint.Receipt{}
		*cur = r
		m.receipts.by[k] = cur
		l := Labels{"pipeline", m.name, "topic", r.Topic, "partition", part}
		read := func(f func(*checkpoint.Receipt) float64) func() float64 {
			return func() float64 {
				m.receipts.mu.Lock()
				defer m.receipts.mu.Unlock()
				return f(cur)
			}
		}
		m.reg.CounterFunc(receiptRecordsName, "Records the broker acknowledged on the topic partition, as of the last checkpoint (the write receipt).",
			l, read(func(r *checkpoint.Receipt) float64 { return float64(r.Records) }))
		m.reg.CounterFunc(receiptBytesName, "Value bytes the broker acknowledged on the topic partition, as of the last checkpoint (the write receipt).",
			l, read(func(r *checkpoint.Receipt) float64 { return float64(r.Bytes) }))
		m.reg.GaugeFunc(receiptCRCName, "CRC32C (Castagnoli) of the values acknowledged on the topic partition in offset order, as of the last checkpoint (the write receipt).",
			l, read(func(r *checkpoint.Receipt) float64 { return float64(r.CRC32C) }))
	}
}
