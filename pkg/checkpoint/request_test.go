package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/change"
)

func wantRequest(t *testing.T, got Request, err error, want Request) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if got.All != want.All || !reflect.DeepEqual(append([]string{}, got.Tables...), append([]string{}, want.Tables...)) {
		t.Fatalf("pending request = %+v, want %+v", got, want)
	}
}

// A request written by another process (no pipeline lock) reaches the
// owner; requests merge; a request after the owner's read stops its
// clear, and the owner's next read asks again for what it asked;
// concurrent writers lose nothing.
func TestFileBackfillRequest(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	if err := RequestBackfillFile(dir, "shop", Request{Tables: []string{"public.a"}}); !errors.Is(err, ErrNeverRan) {
		t.Fatalf("request for a pipeline that never ran: %v, want ErrNeverRan", err)
	}
	f, err := OpenFile(dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Written while the owner holds the pipeline's lock.
	if err := RequestBackfillFile(dir, "shop", Request{Tables: []string{"public.b", "public.a"}}); err != nil {
		t.Fatal(err)
	}
	got, err := f.PendingBackfill(ctx)
	wantRequest(t, got, err, Request{Tables: []string{"public.a", "public.b"}})
	if err := RequestBackfillFile(dir, "shop", Request{Tables: []string{"public.c", "public.a"}}); err != nil {
		t.Fatal(err)
	}
	clearAfterAgain(t, f, got, Request{Tables: []string{"public.a", "public.c"}})
	if _, err := os.Stat(filepath.Join(dir, "shop.backfill.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("request file left after everything was cleared: %v", err)
	}

	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := RequestBackfillFile(dir, "shop", Request{Tables: []string{fmt.Sprintf("s.t%02d", i)}}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err = PendingFile(dir, "shop")
	if err != nil || len(got.Tables) != 20 {
		t.Fatalf("after 20 concurrent requests: %d tables pending (%v)", len(got.Tables), err)
	}
	if err := RequestBackfillFile(dir, "shop", Request{All: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ = f.PendingBackfill(ctx); !got.All {
		t.Fatalf("all not recorded: %+v", got)
	}
	// The checkpoint is untouched by all of this.
	if _, found, err := f.Load(ctx); err != nil || found {
		t.Fatalf("checkpoint after requests: found %v, %v", found, err)
	}
}

func TestFileBackfillRequestCorrupt(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "shop.backfill.json"), []byte(`{"version":1,"pipeline":"other","tables":["a.b"]}`), 0o600)
	if _, err := PendingFile(dir, "shop"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("request of another pipeline: %v, want ErrCorrupt", err)
	}
}

func FuzzDecodeRequestFile(f *testing.F) {
	f.Add([]byte(`{"version":1,"pipeline":"shop","tables":["public.a"],"requested_at":"2026-01-01T00:00:00Z"}`))
	f.Add([]byte(`{"version":1,"pipeline":"shop","all":true}`))
	f.Add([]byte(`{"version":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeRequestFile(data, "shop")
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error does not wrap ErrCorrupt: %v", err)
			}
			return
		}
		for i := 1; i < len(r.Tables); i++ {
			if r.Tables[i-1] >= r.Tables[i] {
				t.Fatalf("tables not sorted and unique: %q", r.Tables)
			}
		}
	})
}

// The request lives in the pipeline's item: written by another process
// with one UpdateItem that leaves the lease alone, kept across checkpoints
// and renewals, cleared by the owner only.
func TestDynamoDBBackfillRequest(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBBackfillRequest)
}

func testDynamoDBBackfillRequest(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	// A lease long enough that no renewal lands between the reads below.
	d := openTest(t, cl, table, "shop", 30*time.Second)
	if err := RequestBackfillDynamoDB(ctx, cl, table, "nope", Request{All: true}); !errors.Is(err, ErrNeverRan) {
		t.Fatalf("request for a pipeline without an item: %v, want ErrNeverRan", err)
	}
	if err := d.Save(ctx, Checkpoint{Position: change.Position(`{"lsn":"0/1"}`)}); err != nil {
		t.Fatal(err)
	}
	before := rawItem(t, cl, table, "shop")
	if err := RequestBackfillDynamoDB(ctx, cl, table, "shop", Request{Tables: []string{"public.b", "public.a"}}); err != nil {
		t.Fatal(err)
	}
	after := rawItem(t, cl, table, "shop")
	for _, a := range []string{attrOwner, attrEpoch, attrHeartbeat, attrLeaseMS, attrPosition, attrUpdatedAt} {
		if !reflect.DeepEqual(before[a], after[a]) {
			t.Errorf("the request changed %s: %v -> %v", a, before[a], after[a])
		}
	}
	got, err := d.PendingBackfill(ctx)
	wantRequest(t, got, err, Request{Tables: []string{"public.a", "public.b"}})
	handed := got
	if err := RequestBackfillDynamoDB(ctx, cl, table, "shop", Request{All: true, Tables: []string{"public.c"}}); err != nil {
		t.Fatal(err)
	}
	// A checkpoint and the lease go on as before and keep the request.
	if err := d.Save(ctx, Checkpoint{Position: change.Position(`{"lsn":"0/2"}`)}); err != nil {
		t.Fatal(err)
	}
	clearAfterAgain(t, d, handed, Request{All: true, Tables: []string{"public.c"}})
	if err := RequestBackfillDynamoDB(ctx, cl, table, "shop", Request{All: true, Tables: []string{"public.c"}}); err != nil {
		t.Fatal(err)
	}
	got, err = PendingDynamoDB(ctx, cl, table, "shop")
	wantRequest(t, got, err, Request{All: true, Tables: []string{"public.c"}})

	// A stale owner cannot clear: its successor must still see the request.
	stale := &DynamoDB{client: cl, opts: DynamoDBOptions{Table: table, Pipeline: "shop", Owner: "someone-else"}, epoch: d.Epoch()}
	if err := stale.ClearBackfill(ctx, got); err == nil {
		t.Fatal("a store that does not own the pipeline cleared its request")
	}
	if err := d.ClearBackfill(ctx, got); err != nil {
		t.Fatal(err)
	}
	got, err = d.PendingBackfill(ctx)
	wantRequest(t, got, err, Request{})
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// Released (no owner): a request still lands, for the next run.
	if err := RequestBackfillDynamoDB(ctx, cl, table, "shop", Request{Tables: []string{"public.a"}}); err != nil {
		t.Fatal(err)
	}
	d2 := openTest(t, cl, table, "shop", 3*time.Second)
	got, err = d2.PendingBackfill(ctx)
	wantRequest(t, got, err, Request{Tables: []string{"public.a"}})
}

// TestDynamoDBBackfillRequestRepeats: a request that names a table twice
// is queued once, and a clear that names it twice clears it. DynamoDB
// refuses a string set holding a value twice ("Input collection contains
// duplicates"); moto takes one, dynalite refuses it as DynamoDB does.
func TestDynamoDBBackfillRequestRepeats(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBBackfillRequestRepeats)
}

func testDynamoDBBackfillRequestRepeats(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	d := openTest(t, cl, table, "shop", 30*time.Second)
	twice := Request{Tables: []string{"public.b", "public.a", "public.b"}}
	if err := RequestBackfillDynamoDB(ctx, cl, table, "shop", twice); err != nil {
		t.Fatalf("request naming public.b twice: %v", err)
	}
	got, err := d.PendingBackfill(ctx)
	wantRequest(t, got, err, Request{Tables: []string{"public.a", "public.b"}})
	twice.Stamp = got.Stamp // the clear of what that read handed over
	if err := d.ClearBackfill(ctx, twice); err != nil {
		t.Fatalf("clear naming public.b twice: %v", err)
	}
	got, err = d.PendingBackfill(ctx)
	wantRequest(t, got, err, Request{})
}

// clearAfterAgain plays the owner after a request came between its read
// (handed) and its clear: the clear clears nothing (ErrRequestedSince),
// the next read asks again for again, the latest request's tables (the
// ones it had handed over too), and a clear of both leaves nothing.
func clearAfterAgain(t *testing.T, s Requests, handed, again Request) {
	t.Helper()
	ctx := context.Background()
	if err := s.ClearBackfill(ctx, handed); !errors.Is(err, ErrRequestedSince) {
		t.Fatalf("clear after a later request: %v, want ErrRequestedSince", err)
	}
	pending, err := s.PendingBackfill(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if pending.Stamp == handed.Stamp || pending.LastAfter != handed.Stamp {
		t.Fatalf("stamp %d (the latest request written on %d) after one more request, read %d before", pending.Stamp, pending.LastAfter, handed.Stamp)
	}
	fresh := pending.Again(handed)
	wantRequest(t, fresh, nil, again)
	both := handed.Merge(fresh)
	both.Stamp = pending.Stamp
	if err := s.ClearBackfill(ctx, both); err != nil {
		t.Fatal(err)
	}
	left, err := s.PendingBackfill(ctx)
	wantRequest(t, left, err, Request{})
}

// Again: tables not handed over are asked for; after one request since
// the hand-over (written on its stamp), its own tables too; after more,
// or after the store's request was removed and written anew, every table
// pending; a store whose writers predate the stamp (0) asks only for what
// was not handed, as before.
func TestRequestAgain(t *testing.T) {
	handed := Request{Tables: []string{"s.a", "s.b"}, Stamp: 3}
	pending := Request{Tables: []string{"s.a", "s.b", "s.c"}, Stamp: 3}
	wantRequest(t, pending.Again(handed), nil, Request{Tables: []string{"s.c"}})
	pending.Stamp, pending.Last, pending.LastAfter = 9, &Request{Tables: []string{"s.a", "s.c"}}, 3
	wantRequest(t, pending.Again(handed), nil, Request{Tables: []string{"s.a", "s.c"}})
	pending.LastAfter = 7
	wantRequest(t, pending.Again(handed), nil, Request{Tables: []string{"s.a", "s.b", "s.c"}})
	pending.LastAfter = 0 // written after the file was removed
	wantRequest(t, pending.Again(handed), nil, Request{Tables: []string{"s.a", "s.b", "s.c"}})
	wantRequest(t, Request{Tables: []string{"s.a"}}.Again(Request{Tables: []string{"s.a"}}), nil, Request{})
	wantRequest(t, pending.Again(Request{}), nil, Request{Tables: []string{"s.a", "s.b", "s.c"}})
}

func rawItem(t *testing.T, cl *dynamodb.Client, table, pipeline string) map[string]types.AttributeValue {
	t.Helper()
	out, err := cl.GetItem(context.Background(), &dynamodb.GetItemInput{
		TableName: aws.String(table), Key: map[string]types.AttributeValue{attrPipeline: str(pipeline)}, ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}
