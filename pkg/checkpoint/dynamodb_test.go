package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/change"
)

// These tests talk to the DynamoDB engines of `make services-up`, each test
// once per engine (awstest.ForEachDynamoDB): moto on 127.0.0.1:5000 and
// dynalite on 127.0.0.1:4567; -short skips them.

// dynamoClient points the SDK environment at the engine e for the rest of t
// (for code that builds its own client) and returns a client of it.
func dynamoClient(t *testing.T, e awstest.Engine) *dynamodb.Client {
	t.Helper()
	return dynamodb.NewFromConfig(awstest.EnvAt(t, e))
}

func testTable() string { return fmt.Sprintf("tributary-test-%d-%d", os.Getpid(), rand.IntN(1e6)) }

func openTest(t *testing.T, cl *dynamodb.Client, table, pipeline string, lease time.Duration) *DynamoDB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := OpenDynamoDB(ctx, cl, DynamoDBOptions{Table: table, Pipeline: pipeline, LeaseDuration: lease, CreateTable: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestDynamoDBSaveLoadRelease(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBSaveLoadRelease)
}

func testDynamoDBSaveLoadRelease(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	d := openTest(t, cl, table, "shop", 3*time.Second)
	if d.Epoch() != 1 {
		t.Fatalf("first owner has epoch %d, want 1", d.Epoch())
	}
	if _, found, err := d.Load(ctx); err != nil || found {
		t.Fatalf("Load on a new pipeline: found %v, err %v", found, err)
	}
	pos := change.Position(`{"slot":"s","lsn":"0/16B3748","backfilled":true}`)
	if err := d.Save(ctx, Checkpoint{Pipeline: "shop", Position: pos, Delivery: DeliveryExactlyOnce}); err != nil {
		t.Fatal(err)
	}
	cp, found, err := d.Load(ctx)
	if err != nil || !found || string(cp.Position) != string(pos) || cp.Epoch != 1 || cp.Owner != d.Owner() || cp.Delivery != DeliveryExactlyOnce {
		t.Fatalf("Load = %+v, %v, %v", cp, found, err)
	}
	if err := d.Owned(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if d.Owned() == nil {
		t.Fatal("Owned after Close")
	}
	// Released: the next owner starts at once, with the next epoch and the
	// same checkpoint.
	start := time.Now()
	d2 := openTest(t, cl, table, "shop", 3*time.Second)
	if waited := time.Since(start); waited > 2*time.Second {
		t.Fatalf("acquiring a released lease took %s", waited)
	}
	if d2.Epoch() != 2 {
		t.Fatalf("second owner has epoch %d, want 2", d2.Epoch())
	}
	cp, found, err = d2.Load(ctx)
	if err != nil || !found || string(cp.Position) != string(pos) {
		t.Fatalf("Load by the next owner = %+v, %v, %v", cp, found, err)
	}
}

// A holder that keeps renewing keeps the pipeline; one that stops renewing
// (frozen) loses it after its lease, and its writes are fenced.
func TestDynamoDBTakeoverAndFencing(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBTakeoverAndFencing)
}

func testDynamoDBTakeoverAndFencing(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	// Long enough that the holder's renewals (requests to moto) are never
	// late on a loaded 2-core machine; shorter leases made the waiting task
	// take over now and then, which is right for a holder that is late.
	const lease = 3 * time.Second
	a := openTest(t, cl, table, "p", lease)
	if err := a.Save(ctx, Checkpoint{Position: change.Position(`1`)}); err != nil {
		t.Fatal(err)
	}

	// While a renews, b waits.
	bctx, cancel := context.WithTimeout(ctx, 3*lease)
	_, err := OpenDynamoDB(bctx, cl, DynamoDBOptions{Table: table, Pipeline: "p", LeaseDuration: lease})
	cancel()
	if !errors.Is(err, ErrOwned) {
		t.Fatalf("a second task took a renewed lease: %v", err)
	}
	if err := a.Owned(); err != nil {
		t.Fatalf("holder lost a lease it renewed: %v", err)
	}

	// Freeze a: no more renewals. Its own view expires after one lease.
	a.stopHeartbeat()
	start := time.Now()
	b := openTest(t, cl, table, "p", lease)
	waited := time.Since(start)
	if waited < lease {
		t.Fatalf("took over after %s, before the lease of %s ran out", waited, lease)
	}
	if b.Epoch() != 2 {
		t.Fatalf("new owner epoch %d, want 2", b.Epoch())
	}
	if err := a.Owned(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale holder still believes it owns the pipeline: %v", err)
	}
	// Even ignoring its own clock, the stale holder's write is fenced.
	a.lease.renewed(time.Now())
	a.lease = newLease(lease)
	a.lease.renewed(time.Now())
	err = a.Save(ctx, Checkpoint{Position: change.Position(`2`)})
	if !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale holder's Save: %v, want ErrLeaseLost", err)
	}
	cp, _, err := b.Load(ctx)
	if err != nil || string(cp.Position) != "1" {
		t.Fatalf("checkpoint after a fenced write = %s, %v; want 1", cp.Position, err)
	}
	// The stale holder's Close does not release b's lease.
	a.Close()
	if err := b.Save(ctx, Checkpoint{Position: change.Position(`3`)}); err != nil {
		t.Fatalf("new owner's Save after the stale Close: %v", err)
	}
}

// TestDynamoDBRacingOpeners: tasks that open one pipeline at the same
// moment race on conditional writes, and exactly one wins each time: the
// first item's creation (epoch 1), a released lease (epoch 2), and a
// takeover from a holder that stopped renewing (epoch 3); the others keep
// waiting and give up with ErrOwned. Two winners of one epoch would both
// publish. Only on an engine that serialises conditional writes to an
// item as DynamoDB does: on moto two of them could pass one condition.
func TestDynamoDBRacingOpeners(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBRacingOpeners)
}

func testDynamoDBRacingOpeners(t *testing.T, e awstest.Engine) {
	awstest.NeedSerialConditions(t, e)
	cl := dynamoClient(t, e)
	table := testTable()
	const (
		tasks = 8
		lease = 3 * time.Second // see TestDynamoDBTakeoverAndFencing
	)
	if _, err := OpenDynamoDB(context.Background(), cl, DynamoDBOptions{Table: table, Pipeline: "setup", CreateTable: true}); err != nil {
		t.Fatal(err)
	}
	// race opens the pipeline from tasks goroutines released together, each
	// giving up after wait; it returns the one winner, failing t unless
	// there is exactly one and every other gave up with ErrOwned.
	race := func(round string, wait time.Duration, wantEpoch int64) *DynamoDB {
		t.Helper()
		var (
			start = make(chan struct{})
			mu    sync.Mutex
			won   []*DynamoDB
			lost  int
			wg    sync.WaitGroup
		)
		for i := range tasks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				ctx, cancel := context.WithTimeout(context.Background(), wait)
				defer cancel()
				d, err := OpenDynamoDB(ctx, cl, DynamoDBOptions{Table: table, Pipeline: "p", LeaseDuration: lease, Owner: fmt.Sprintf("%s-%d", round, i)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won = append(won, d)
				case errors.Is(err, ErrOwned):
					lost++
				default:
					t.Errorf("%s: task %d: %v", round, i, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		for _, d := range won {
			t.Cleanup(func() { d.Close() })
		}
		if len(won) != 1 || lost != tasks-1 {
			var who []string
			for _, d := range won {
				who = append(who, fmt.Sprintf("%s (epoch %d)", d.Owner(), d.Epoch()))
			}
			t.Fatalf("%s: %d of %d tasks took the lease (%s), %d gave up; want exactly one winner", round, len(won), tasks, strings.Join(who, ", "), lost)
		}
		w := won[0]
		it := rawItem(t, cl, table, "p")
		if w.Epoch() != wantEpoch || attrS(it, attrOwner) != w.Owner() || attrN(it, attrEpoch) != fmt.Sprint(wantEpoch) {
			t.Fatalf("%s: winner %s holds epoch %d; the item names owner %q epoch %s; want epoch %d",
				round, w.Owner(), w.Epoch(), attrS(it, attrOwner), attrN(it, attrEpoch), wantEpoch)
		}
		return w
	}

	// Shorter than a takeover wait: the losers never take the winner's lease.
	first := race("create", 2*time.Second, 1)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second := race("released", 2*time.Second, 2)
	second.stopHeartbeat()
	// Past one takeover wait, while the new holder renews.
	third := race("takeover", takeoverWait(lease)+2*time.Second, 3)
	if err := third.Save(context.Background(), Checkpoint{Position: change.Position(`1`)}); err != nil {
		t.Fatalf("winner of the takeover: %v", err)
	}
	if err := second.Save(context.Background(), Checkpoint{Position: change.Position(`2`)}); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the holder taken over saved: %v, want ErrLeaseLost", err)
	}
}

// TestDynamoDBWriteRetriedAfterItsEffect: the SDK retries a request whose
// reply it could not read (moto now and then answers with a checksum that
// does not match; a connection can drop after DynamoDB wrote). When the
// first attempt of a conditional write took effect, the retry fails its
// condition: a release must still report the lease released, not lost to
// another task, and an open must take the lease its own attempt took,
// not wait a lease for itself to let go.
func TestDynamoDBWriteRetriedAfterItsEffect(t *testing.T) {
	awstest.ForEachDynamoDB(t, testDynamoDBWriteRetriedAfterItsEffect)
}

func testDynamoDBWriteRetriedAfterItsEffect(t *testing.T, e awstest.Engine) {
	cl := dynamoClient(t, e)
	table := testTable()
	ctx := context.Background()
	const lease = 3 * time.Second
	d := openTest(t, cl, table, "shop", lease)
	if err := d.Save(ctx, Checkpoint{Position: change.Position(`1`)}); err != nil {
		t.Fatal(err)
	}
	// The release's first attempt, without its reply.
	d.stopHeartbeat()
	if _, err := cl.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: d.key(),
		UpdateExpression:          aws.String("REMOVE #o SET #h = #h + :one"),
		ConditionExpression:       aws.String(ownedCond),
		ExpressionAttributeNames:  names("#o #h", ownedCond),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1), ":me": str(d.Owner()), ":epoch": num(d.Epoch())},
	}); err != nil && ownerNow(t, cl, table, d.key()) != "" {
		t.Fatal(err) // (a retry of this call whose first attempt released the lease fails its condition)
	}
	if err := d.Close(); err != nil {
		t.Fatalf("Close after an attempt that released the lease: %v", err)
	}

	// An open whose take's first attempt went through: the item names it.
	const me = "task-whose-reply-was-lost"
	if _, err := cl.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(table), Key: d.key(),
		UpdateExpression:          aws.String("SET #o = :me, #e = :next, #h = :zero, #l = :lease"),
		ConditionExpression:       aws.String("attribute_not_exists(#o) AND #e = :seen"),
		ExpressionAttributeNames:  names("#o #e #h #l"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":me": str(me), ":next": num(2), ":zero": num(0), ":lease": num(lease.Milliseconds()), ":seen": num(1)},
	}); err != nil && ownerNow(t, cl, table, d.key()) != me {
		t.Fatal(err)
	}
	octx, cancel := context.WithTimeout(ctx, lease) // shorter than a takeover wait
	defer cancel()
	start := time.Now()
	d2, err := OpenDynamoDB(octx, cl, DynamoDBOptions{Table: table, Pipeline: "shop", LeaseDuration: lease, Owner: me})
	if err != nil {
		t.Fatalf("open of the task its own attempt made the owner: %v after %s", err, time.Since(start).Round(time.Millisecond))
	}
	defer d2.Close()
	if d2.Epoch() != 2 {
		t.Fatalf("epoch %d, want 2", d2.Epoch())
	}
	if cp, found, err := d2.Load(ctx); err != nil || !found || string(cp.Position) != "1" {
		t.Fatalf("Load = %+v, %v, %v", cp, found, err)
	}
	if err := d2.Save(ctx, Checkpoint{Position: change.Position(`2`)}); err != nil {
		t.Fatal(err)
	}
}

// ownerNow is the owner the pipeline's item names: the test's own
// conditional writes meet the moto replies the test above is about (the
// SDK retries one whose first attempt went through, and the retry fails
// its condition), so they are judged by the item.
func ownerNow(t *testing.T, cl *dynamodb.Client, table string, key map[string]types.AttributeValue) string {
	t.Helper()
	out, err := cl.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return attrS(out.Item, attrOwner)
}

func attrS(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func attrN(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		return v.Value
	}
	return ""
}

func TestDecodeItem(t *testing.T) {
	good := map[string]types.AttributeValue{
		attrPipeline: str("p"), attrOwner: str("o"), attrEpoch: num(3), attrHeartbeat: num(9),
		attrLeaseMS: num(2000), attrPosition: str(`{"a":1}`), attrUpdatedAt: str("2026-01-02T03:04:05Z"), attrVersion: num(1),
	}
	it, err := decodeItem(good)
	if err != nil || it.Pipeline != "p" || it.Owner != "o" || it.Epoch != 3 || it.Heartbeat != 9 ||
		it.leaseDuration(0) != 2*time.Second || string(it.Position) != `{"a":1}` {
		t.Fatalf("decodeItem = %+v, %v", it, err)
	}
	bad := []func(m map[string]types.AttributeValue){
		func(m map[string]types.AttributeValue) { delete(m, attrPipeline) },
		func(m map[string]types.AttributeValue) { delete(m, attrEpoch) },
		func(m map[string]types.AttributeValue) { m[attrEpoch] = str("3") },
		func(m map[string]types.AttributeValue) { m[attrEpoch] = num(-1) },
		func(m map[string]types.AttributeValue) { m[attrHeartbeat] = &types.AttributeValueMemberN{Value: "1e3"} },
		func(m map[string]types.AttributeValue) { m[attrPosition] = str("{not json") },
		func(m map[string]types.AttributeValue) { m[attrVersion] = num(3) },
		// chunks.go: a pointer beside a position, or one that is malformed.
		func(m map[string]types.AttributeValue) { m[attrParts] = str("1.1 1 " + strings.Repeat("ab", 32)) },
		func(m map[string]types.AttributeValue) {
			delete(m, attrPosition)
			m[attrParts] = str("1.1 0 " + strings.Repeat("ab", 32))
		},
		func(m map[string]types.AttributeValue) { delete(m, attrPosition); m[attrParts] = str("1.1 2") },
		func(m map[string]types.AttributeValue) { m[attrUpdatedAt] = str("yesterday") },
		func(m map[string]types.AttributeValue) { m[attrOwner] = &types.AttributeValueMemberBOOL{Value: true} },
	}
	for i, mutate := range bad {
		m := map[string]types.AttributeValue{}
		for k, v := range good {
			m[k] = v
		}
		mutate(m)
		if _, err := decodeItem(m); err == nil {
			t.Errorf("case %d: decoded a bad item", i)
		}
	}
}

// FuzzDecodeItem feeds decodeItem items as another writer (or a person in
// the console) could leave them: any attribute as a string, a number or
// something else.
func FuzzDecodeItem(f *testing.F) {
	f.Add("p", "o", "3", "9", "2000", `{"a":1}`, "2026-01-02T03:04:05Z", "1", uint16(0))
	f.Add("", "", "-1", "x", "", "{", "", "9", uint16(0xffff))
	f.Fuzz(func(t *testing.T, pipeline, owner, epoch, hb, lease, pos, ts, ver string, kinds uint16) {
		fields := []struct{ name, v string }{
			{attrPipeline, pipeline}, {attrOwner, owner}, {attrEpoch, epoch}, {attrHeartbeat, hb},
			{attrLeaseMS, lease}, {attrPosition, pos}, {attrUpdatedAt, ts}, {attrVersion, ver},
		}
		m := map[string]types.AttributeValue{}
		for i, fl := range fields {
			switch (kinds >> (2 * i)) & 3 {
			case 0:
				m[fl.name] = &types.AttributeValueMemberS{Value: fl.v}
			case 1:
				m[fl.name] = &types.AttributeValueMemberN{Value: fl.v}
			case 2:
				m[fl.name] = &types.AttributeValueMemberB{Value: []byte(fl.v)}
			}
		}
		it, err := decodeItem(m)
		if err != nil {
			return
		}
		if it.Epoch < 0 || it.Heartbeat < 0 || it.LeaseMS < 0 {
			t.Fatalf("negative counters accepted: %+v", it)
		}
		if it.Position != nil && !jsonValid(it.Position) {
			t.Fatalf("invalid position accepted")
		}
		if d := it.leaseDuration(time.Second); d <= 0 || d > 24*time.Hour {
			t.Fatalf("lease duration %s", d)
		}
	})
}

func jsonValid(b []byte) bool { return json.Valid(b) }
