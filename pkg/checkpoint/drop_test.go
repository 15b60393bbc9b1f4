package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestDynamoDBDropChunked: Drop removes a chunked checkpoint's item and
// every chunk item (and only the pipeline's: another pipeline's item
// stays); a second opener then finds no item.
func TestDynamoDBDropChunked(t *testing.T) { awstest.ForEachDynamoDB(t, testDynamoDBDropChunked) }

func testDynamoDBDropChunked(t *testing.T, e awstest.Engine) {
	awstest.NeedTransactions(t, e)
	cl, table, d := savedBesideOther(t, e, Checkpoint{Pipeline: "shop", Position: largePosition(900 << 10), Receipts: manyReceipts(100)})
	ctx := context.Background()
	d.Close()
	d = openTest(t, cl, table, "shop", 5*time.Second)
	if !d.Existed() || d.ChunkItems() < 2 {
		t.Fatalf("reopened: existed %v, %d chunk items; want an item with chunks", d.Existed(), d.ChunkItems())
	}
	if keys := itemKeys(t, cl, table); len(keys) < 4 {
		t.Fatalf("before Drop: items %v, want other, shop and its chunks", keys)
	}
	if err := d.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if keys := itemKeys(t, cl, table); !slices.Equal(keys, []string{"other"}) {
		t.Errorf("after Drop: items %v, want [other]", keys)
	}
}

// TestDynamoDBRefuseRunning: with RefuseRunning an opener fails with
// ErrOwned once the holder renews, instead of waiting for it.
func TestDynamoDBRefuseRunning(t *testing.T) { awstest.ForEachDynamoDB(t, testDynamoDBRefuseRunning) }

func testDynamoDBRefuseRunning(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	openTest(t, cl, table, "shop", 600*time.Millisecond) // renews every 200 ms
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := OpenDynamoDB(ctx, cl, DynamoDBOptions{Table: table, Pipeline: "shop", RefuseRunning: true})
	if !errors.Is(err, ErrOwned) || ctx.Err() != nil {
		t.Fatalf("open while held: %v after %s, want ErrOwned before the deadline", err, time.Since(start))
	}
}

// TestFileDrop: Drop removes the pipeline's files, the lock included,
// and leaves another pipeline's alone.
func TestFileDrop(t *testing.T) {
	dir := t.TempDir()
	f, err := OpenFile(dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(context.Background(), Checkpoint{Pipeline: "shop", Position: []byte(`{"lsn":1}`)}); err != nil {
		t.Fatal(err)
	}
	if err := RequestBackfillFile(dir, "shop", Request{All: true}); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "shop-eu.checkpoint.json"), []byte("{}"), 0o600)
	if got := f.Contents(); len(got) != 3 {
		t.Errorf("contents %v, want the checkpoint, the backfill request and its lock", got)
	}
	if err := f.Drop(); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(left) != 1 || filepath.Base(left[0]) != "shop-eu.checkpoint.json" {
		t.Errorf("after Drop: %v, want only shop-eu.checkpoint.json", left)
	}
}

// TestDynamoDBDropAfterDeletingAttempt: the SDK retries a request whose
// reply it could not read (seen against the emulator under load: "response
// did not match expected checksum"). When the first attempt did delete the
// item, the retry fails its condition; Drop must report the drop done, not
// that it failed, and leave other pipelines' items alone.
func TestDynamoDBDropAfterDeletingAttempt(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBDropAfterDeletingAttempt)
}

func testDynamoDBDropAfterDeletingAttempt(t *testing.T, e awstest.Engine) {
	awstest.NeedTransactions(t, e)
	cl, table, d := savedBesideOther(t, e, Checkpoint{Pipeline: "shop", Position: []byte(`{"lsn":"1"}`)})
	ctx := context.Background()
	// The first attempt's effect, without its reply.
	if _, err := cl.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: d.key()}); err != nil {
		t.Fatal(err)
	}
	if err := d.Drop(ctx); err != nil {
		t.Fatalf("Drop after an attempt that deleted the item: %v", err)
	}
	if keys := itemKeys(t, cl, table); !slices.Equal(keys, []string{"other"}) {
		t.Errorf("after Drop: items %v, want [other]", keys)
	}
}

// savedBesideOther opens pipeline "shop" in a new table of engine e that also holds
// pipeline "other"'s item, and saves cp.
func savedBesideOther(t *testing.T, e awstest.Engine, cp Checkpoint) (*dynamodb.Client, string, *DynamoDB) {
	cl := dynamoClient(t, e)
	table := testTable()
	other := openTest(t, cl, table, "other", 5*time.Second)
	other.Close()
	d := openTest(t, cl, table, "shop", 5*time.Second)
	if err := d.Save(context.Background(), cp); err != nil {
		t.Fatal(err)
	}
	return cl, table, d
}
