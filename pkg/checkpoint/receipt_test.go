package checkpoint

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/awstest"
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

// TestDynamoDBKeepsReceipts: the DynamoDB store keeps the receipts in one
// attribute of the pipeline's item, and the lease-free reader for status
// gives them back too.
func TestDynamoDBKeepsReceipts(t *testing.T) { awstest.ForEachDynamoDB(t, testDynamoDBKeepsReceipts) }

func testDynamoDBKeepsReceipts(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	d := openTest(t, cl, table, "p", 10*time.Second)
	defer d.Close()
	rs := []Receipt{{Topic: "t", Partition: 0, Records: 2, Bytes: 9, CRC32C: 42, FirstOffset: 0, NextOffset: 2}}
	ctx := context.Background()
	if err := d.Save(ctx, Checkpoint{Position: []byte(`{"lsn":"0/2"}`), Receipts: rs}); err != nil {
		t.Fatal(err)
	}
	cp, found, err := d.Load(ctx)
	if err != nil || !found || !reflect.DeepEqual(cp.Receipts, rs) {
		t.Fatalf("Load: %+v %v %v", cp.Receipts, found, err)
	}
	cp, found, err = ReadDynamoDB(ctx, cl, table, "p")
	if err != nil || !found || !reflect.DeepEqual(cp.Receipts, rs) {
		t.Fatalf("ReadDynamoDB: %+v %v %v", cp.Receipts, found, err)
	}
}
