package checkpoint

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Receipt is a write receipt: what the broker acknowledged on one topic
// partition for this pipeline, saved with every checkpoint so that a
// consumer can reconcile what it read (README, "Write receipts").
//
// A consumer reproduces it by reading the partition in offset order from
// FirstOffset up to NextOffset (exclusive), leaving out the offsets of
// Gaps, and for each record counting 1 in Records, len(value) in Bytes
// (0 for a tombstone) and folding the value into CRC32C: the Castagnoli
// CRC-32 of every value concatenated in offset order, as
// crc32.Update(crc, crc32.MakeTable(crc32.Castagnoli), value).
type Receipt struct {
	Topic       string `json:"topic"`
	Partition   int32  `json:"partition"`
	Records     uint64 `json:"records"`
	Bytes       uint64 `json:"bytes"`
	CRC32C      uint32 `json:"crc32c"`
	FirstOffset int64  `json:"first_offset"`
	NextOffset  int64  `json:"next_offset"`
	// Gaps are offset ranges [from, to) in the partition that a previous
	// run wrote after its last saved receipt and before it crashed: their
	// records are in the topic (and published again after them) but not
	// in the receipt. A graceful stop leaves none.
	Gaps [][2]int64 `json:"gaps,omitempty"`
}

// maxReceiptsBytes bounds the receipts kept in one checkpoint (a DynamoDB
// item is at most 400 KB): far more partitions than a pipeline writes.
const maxReceiptsBytes = 256 << 10

// encodeReceipts is the receipts as one JSON attribute; nil for none.
func encodeReceipts(rs []Receipt) ([]byte, error) {
	if len(rs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(rs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encode receipts: %w", err)
	}
	if len(b) > maxReceiptsBytes {
		return nil, fmt.Errorf("checkpoint: receipts of %d partitions are over %d KiB", len(rs), maxReceiptsBytes>>10)
	}
	return b, nil
}

// decodeReceipts reads receipts written by encodeReceipts (or by hand):
// its errors do not quote the data.
func decodeReceipts(b []byte) ([]Receipt, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var rs []Receipt
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, errors.New("receipts are not a JSON list of receipts")
	}
	for _, r := range rs {
		if r.Topic == "" || r.Partition < 0 || r.FirstOffset < 0 || r.NextOffset < r.FirstOffset {
			return nil, errors.New("a receipt has no topic, a negative partition or offsets out of order")
		}
	}
	return rs, nil
}
