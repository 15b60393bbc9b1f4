package checkpoint

import (
	"context"
	"reflect"
	"testing"
)

// TestReceiptsSavedWithTheCheckpoint: the file store keeps the write
// receipts with the position and gives them back.
func TestReceiptsSavedWithTheCheckpoint(t *testing.T) {
	f, err := OpenFile(t.TempDir(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rs := []Receipt{{Topic: "shop.public.orders", Partition: 2, Records: 3, Bytes: 120, CRC32C: 0xdeadbeef, FirstOffset: 7, NextOffset: 12, Gaps: [][2]int64{{9, 11}}}}
	if err := f.Save(context.Background(), Checkpoint{Position: []byte(`{"lsn":"0/1"}`), Receipts: rs}); err != nil {
		t.Fatal(err)
	}
	cp, found, err := f.Load(context.Background())
	if err != nil || !found || !reflect.DeepEqual(cp.Receipts, rs) {
		t.Fatalf("loaded %+v, %v, %v", cp.Receipts, found, err)
	}
}

// FuzzDecodeReceipts: receipts read back from a file or a DynamoDB item
// (which anyone with access may have edited) never panic, and whatever
// decodes encodes again.
func FuzzDecodeReceipts(f *testing.F) {
	f.Add([]byte(`[{"topic":"t","partition":0,"records":1,"bytes":2,"crc32c":3,"first_offset":0,"next_offset":1}]`))
	f.Add([]byte(`[{"topic":"t","partition":-1}]`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := decodeReceipts(b)
		if err != nil {
			return
		}
		if _, err := encodeReceipts(rs); err != nil && len(b) <= maxReceiptsBytes {
			t.Fatalf("decoded receipts do not encode: %v", err)
		}
	})
}
