package checkpoint

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/change"
)

// largePosition is a position of about n bytes that gzip cannot shrink
// much (random hex), like a MySQL schema history (position.shapes) of many
// tables after many DDL statements.
func largePosition(n int) change.Position {
	b := make([]byte, n/2)
	rand.Read(b)
	return change.Position(`{"file":"binlog.000042","pos":4,"shapes":"` + hex.EncodeToString(b) + `"}`)
}

func manyReceipts(n int) []Receipt {
	rs := make([]Receipt, n)
	for i := range rs {
		rs[i] = Receipt{Topic: fmt.Sprintf("shop.inventory.table_with_a_long_name_%05d", i), Partition: int32(i % 64), Records: uint64(i), Bytes: uint64(i) << 10, NextOffset: int64(i)}
	}
	return rs
}

// itemKeys lists the keys of table's items (moto's Scan).
func itemKeys(t *testing.T, cl *dynamodb.Client, table string) []string {
	t.Helper()
	out, err := cl.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(table), ProjectionExpression: aws.String("pipeline")})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, it := range out.Items {
		k, _ := getS(it, attrPipeline, true)
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// TestDynamoDBCheckpointOver400KB: a checkpoint whose position (a schema
// history) and receipts are together far over DynamoDB's 400 KB item
// limit, next to a status snapshot, is saved and read back whole, by the
// owner, by a reader without the lease and by the next owner; a smaller
// one replaces it and leaves no chunk behind; one over what a checkpoint
// can hold is refused with the sizes, and the last checkpoint stays.
// (moto refuses items over 405,000 bytes, as DynamoDB does over 400 KB.)
func TestDynamoDBCheckpointOver400KB(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBCheckpointOver400KB)
}

func testDynamoDBCheckpointOver400KB(t *testing.T, e awstest.Engine) {
	awstest.NeedTransactions(t, e)
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	d := openTest(t, cl, table, "shop", 5*time.Second)
	if err := d.SaveStatus(ctx, []byte(`{"state":"running","tables":"`+strings.Repeat("t", 60<<10)+`"}`)); err != nil {
		t.Fatal(err)
	}
	same := func(label string, got Checkpoint, want Checkpoint) {
		t.Helper()
		if !bytes.Equal(got.Position, want.Position) || !slices.EqualFunc(got.Receipts, want.Receipts, func(a, b Receipt) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
			t.Fatalf("%s: position %d bytes, %d receipts; want %d bytes, %d receipts", label, len(got.Position), len(got.Receipts), len(want.Position), len(want.Receipts))
		}
	}
	big := Checkpoint{Pipeline: "shop", Position: largePosition(900 << 10), Receipts: manyReceipts(1200)}
	for round := range 2 { // a second large one replaces the first
		if round == 1 {
			big.Position = largePosition(700 << 10)
		}
		if err := d.Save(ctx, big); err != nil {
			t.Fatalf("round %d: Save of a %d-byte position: %v", round, len(big.Position), err)
		}
		cp, found, err := d.Load(ctx)
		if err != nil || !found {
			t.Fatalf("Load: %v, %v", found, err)
		}
		same("Load", cp, big)
		cp, _, err = ReadDynamoDB(ctx, cl, table, "shop")
		if err != nil {
			t.Fatal(err)
		}
		same("ReadDynamoDB", cp, big)
		if st, err := ReadDynamoDBStatus(ctx, cl, table, "shop"); err != nil || !bytes.Contains(st, []byte(`"state":"running"`)) {
			t.Fatalf("status after the checkpoint: %.40q, %v", st, err)
		}
	}
	if keys := itemKeys(t, cl, table); len(keys) < 3 || len(keys) > 5 {
		t.Errorf("items %v: want the pipeline's and the chunks of one checkpoint", keys)
	}

	// The next owner reads it whole.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2 := openTest(t, cl, table, "shop", 5*time.Second)
	cp, _, err := d2.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	same("next owner", cp, big)

	// A stale owner (the previous epoch) writes no chunk and no pointer.
	stale := &DynamoDB{client: cl, opts: d2.opts, epoch: d2.epoch - 1, lease: newLease(5 * time.Second), log: d2.log}
	stale.lease.renewed(time.Now())
	before := itemKeys(t, cl, table)
	if err := stale.Save(ctx, Checkpoint{Pipeline: "shop", Position: largePosition(600 << 10)}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale owner's chunked Save: %v, want ErrLeaseLost", err)
	}
	if after := itemKeys(t, cl, table); !slices.Equal(before, after) {
		t.Fatalf("a stale owner's save changed the items: %v, then %v", before, after)
	}
	cp, _, _ = d2.Load(ctx)
	same("after a stale owner's save", cp, big)

	// Too large even in chunks: a clear error, and the checkpoint stays.
	huge := Checkpoint{Pipeline: "shop", Position: largePosition(8 << 20)}
	if err := d2.Save(ctx, huge); err == nil || !strings.Contains(err.Error(), "over the") {
		t.Fatalf("Save of an 8 MiB position: %v", err)
	}
	cp, _, _ = d2.Load(ctx)
	same("after the refused save", cp, big)

	// A small checkpoint goes back into the item; the chunks go.
	small := Checkpoint{Pipeline: "shop", Position: change.Position(`{"file":"binlog.000043","pos":4}`), Receipts: manyReceipts(3)}
	if err := d2.Save(ctx, small); err != nil {
		t.Fatal(err)
	}
	cp, _, _ = d2.Load(ctx)
	same("small", cp, small)
	if keys := itemKeys(t, cl, table); !slices.Equal(keys, []string{"shop"}) {
		t.Errorf("items %v after a small checkpoint, want only shop's", keys)
	}
}

// FuzzDecodeChunks: the data of a chunked checkpoint, as a person or
// another release could leave it in the table. decodeChunks must not
// panic, and what it accepts is a valid position whose re-split reads back
// the same.
func FuzzDecodeChunks(f *testing.F) {
	for _, pos := range []string{`{"file":"b.1","pos":4}`, `[]`, `1`} {
		chunks, digest, err := split(change.Position(pos), manyReceipts(2))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Join(chunks, nil), digest)
	}
	f.Add([]byte("\x1f\x8b not gzip"), strings.Repeat("0", 64))
	f.Fuzz(func(t *testing.T, data []byte, digest string) {
		if d := sha256Hex(data); len(digest) == 64 && digest[0] == '0' {
			digest = d // reach past the digest check too
		}
		pos, receipts, err := decodeChunks(data, digest)
		if err != nil {
			if len(data) > 8 && strings.Contains(err.Error(), string(data)) {
				t.Fatalf("error quotes the data: %v", err)
			}
			return
		}
		chunks, digest2, err := split(pos, receipts)
		if err != nil {
			t.Fatalf("accepted data does not split again: %v", err)
		}
		pos2, receipts2, err := decodeChunks(bytes.Join(chunks, nil), digest2)
		if err != nil || !bytes.Equal(pos, pos2) || len(receipts) != len(receipts2) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TestDynamoDBLargeStatus: a status snapshot of a pipeline with many
// tables (700 KB of JSON) is kept gzipped and read back whole, beside a
// checkpoint over 400 KB; one that stays too large gzipped is refused with
// its sizes, and checkpoints still save.
func TestDynamoDBLargeStatus(t *testing.T) { awstest.ForEachDynamoDB(t, testDynamoDBLargeStatus) }

func testDynamoDBLargeStatus(t *testing.T, e awstest.Engine) {
	awstest.NeedTransactions(t, e)
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	d := openTest(t, cl, table, "shop", 5*time.Second)
	var tables []string
	for i := range 12000 {
		tables = append(tables, fmt.Sprintf(`{"table":"inventory.table_%05d","rows":%d,"done":true}`, i, i*7))
	}
	snapshot := []byte(`{"state":"running","tables":[` + strings.Join(tables, ",") + `]}`)
	if err := d.SaveStatus(ctx, snapshot); err != nil {
		t.Fatalf("SaveStatus of %d bytes: %v", len(snapshot), err)
	}
	big := Checkpoint{Pipeline: "shop", Position: largePosition(500 << 10), Receipts: manyReceipts(1200)}
	if err := d.Save(ctx, big); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadDynamoDBStatus(ctx, cl, table, "shop"); err != nil || !bytes.Equal(got, snapshot) {
		t.Fatalf("status read back: %d bytes, %v; want %d bytes", len(got), err, len(snapshot))
	}
	noise := largePosition(400 << 10)
	if err := d.SaveStatus(ctx, noise); err == nil || !strings.Contains(err.Error(), "not saved") {
		t.Fatalf("SaveStatus of %d incompressible bytes: %v", len(noise), err)
	}
	if err := d.Save(ctx, big); err != nil {
		t.Fatalf("Save after a refused status: %v", err)
	}
	if got, _ := ReadDynamoDBStatus(ctx, cl, table, "shop"); !bytes.Equal(got, snapshot) {
		t.Fatal("the last saved status is gone")
	}
	small := []byte(`{"state":"running"}`)
	if err := d.SaveStatus(ctx, small); err != nil {
		t.Fatal(err)
	}
	if got, _ := ReadDynamoDBStatus(ctx, cl, table, "shop"); !bytes.Equal(got, small) {
		t.Fatalf("small status after a gzipped one: %q", got)
	}
}

// TestDynamoDBFullestItem: the pipeline's item at its fullest without
// chunks — a checkpoint of inlineLimit bytes (position and receipts), the
// largest status snapshot kept (maxStatusBytes gzipped) and a backfill
// request of 500 tables (the backfill API's most) — stays under DynamoDB's
// 400 KB item limit as each engine counts it: it is saved, renewed, saved
// again and read back whole.
func TestDynamoDBFullestItem(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBFullestItem)
}

func testDynamoDBFullestItem(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	d := openTest(t, cl, table, "shop", 3*time.Second)

	// The most receipts an inline checkpoint can carry beside a position.
	rs := manyReceipts(300)
	rec, err := encodeReceipts(rs)
	if err != nil {
		t.Fatal(err)
	}
	head, tail := `{"file":"binlog.000042","pos":4,"shapes":"`, `"}`
	pad := inlineLimit - len(rec) - len(head) - len(tail)
	if pad < 1000 {
		t.Fatalf("receipts of %d bytes leave no room for a position", len(rec))
	}
	pos := change.Position(head + strings.Repeat("a", pad) + tail)
	if len(pos)+len(rec) != inlineLimit {
		t.Fatalf("checkpoint of %d bytes, want %d", len(pos)+len(rec), inlineLimit)
	}
	cp := Checkpoint{Pipeline: "shop", Position: pos, Receipts: rs}
	if err := d.Save(ctx, cp); err != nil {
		t.Fatalf("Save of an inline checkpoint of %d bytes: %v", inlineLimit, err)
	}
	if d.ChunkItems() != 0 {
		t.Fatalf("a checkpoint of inlineLimit bytes went to %d chunk items", d.ChunkItems())
	}

	snapshot := incompressibleStatus(t, maxStatusBytes)
	if err := d.SaveStatus(ctx, snapshot); err != nil {
		t.Fatalf("SaveStatus of %d bytes: %v", len(snapshot), err)
	}
	var tables []string
	for i := range 500 {
		tables = append(tables, fmt.Sprintf("inventory.table_with_a_rather_long_name_%05d", i))
	}
	if err := RequestBackfillDynamoDB(ctx, cl, table, "shop", Request{Tables: tables}); err != nil {
		t.Fatalf("backfill request of %d tables beside the fullest checkpoint and status: %v", len(tables), err)
	}
	time.Sleep(renewEvery(3*time.Second) + 200*time.Millisecond) // a renewal of the full item
	if err := d.Owned(); err != nil {
		t.Fatalf("renewing the full item: %v", err)
	}
	cp.Position = change.Position(head + strings.Repeat("b", pad) + tail)
	if err := d.Save(ctx, cp); err != nil {
		t.Fatalf("Save into the full item: %v", err)
	}
	got, found, err := ReadDynamoDB(ctx, cl, table, "shop")
	if err != nil || !found || string(got.Position) != string(cp.Position) || len(got.Receipts) != len(rs) {
		t.Fatalf("read back: found %v, %d position bytes, %d receipts, %v", found, len(got.Position), len(got.Receipts), err)
	}
	if st, err := ReadDynamoDBStatus(ctx, cl, table, "shop"); err != nil || !bytes.Equal(st, snapshot) {
		t.Fatalf("status read back: %d bytes, %v; want %d", len(st), err, len(snapshot))
	}
	if r, err := d.PendingBackfill(ctx); err != nil || len(r.Tables) != len(tables) {
		t.Fatalf("pending backfill: %d tables, %v; want %d", len(r.Tables), err, len(tables))
	}
	size := 0
	for k, v := range rawItem(t, cl, table, "shop") {
		size += len(k) + attrSize(v)
	}
	t.Logf("%s: the fullest item holds about %d KiB", e.Name, size>>10)
}

// incompressibleStatus is a status snapshot that gzips to just under limit
// bytes (random hex: gzip halves it at best).
func incompressibleStatus(t *testing.T, limit int) []byte {
	t.Helper()
	gz := func(b []byte) int {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Len()
	}
	raw := make([]byte, 2*limit)
	rand.Read(raw)
	h := hex.EncodeToString(raw)
	n := len(h)
	for range 5 {
		s := []byte(`{"state":"running","noise":"` + h[:n] + `"}`)
		g := gz(s)
		if g <= limit && g > limit-4096 {
			return s
		}
		n = int(float64(n) * float64(limit-2048) / float64(g))
	}
	t.Fatal("no snapshot gzips to just under the limit")
	return nil
}

// attrSize is about what a value counts towards DynamoDB's item size.
func attrSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return len(v.Value)
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	}
	return 1
}
