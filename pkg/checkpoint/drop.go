package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// What `tributary drop` removes from a store (docs/operations.md): the
// whole of what a pipeline keeps there, as this store's owner, so that no
// task runs meanwhile; and after which the store is closed.

// fileSuffixes are the files the file store keeps for a pipeline beside
// its lock: the checkpoint, the status snapshot (written by pkg/status),
// the backfill request and its lock (request.go).
var fileSuffixes = []string{".checkpoint.json", ".status.json", ".backfill.json", ".backfill.lock"}

// Contents lists the files of the pipeline in the store, its lock file
// left out (opening the store makes it).
func (f *File) Contents() []string {
	var have []string
	for _, suffix := range fileSuffixes {
		p := filepath.Join(f.dir, f.pipeline+suffix)
		if _, err := os.Stat(p); err == nil {
			have = append(have, p)
		}
	}
	return have
}

// Drop removes the pipeline's files, the lock file last, and closes the
// store. Another opener that found the lock file before it went is
// refused by the lock still held; one after it makes a new one.
func (f *File) Drop() error {
	f.mu.Lock()
	closed := f.lock == nil
	f.mu.Unlock()
	if closed {
		return errClosed
	}
	var errs []error
	for _, p := range f.Contents() {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, pattern := range []string{f.path + ".tmp-*", filepath.Join(f.dir, f.pipeline+".status.json.tmp-*")} {
		stale, _ := filepath.Glob(pattern)
		for _, s := range stale {
			os.Remove(s)
		}
	}
	if len(errs) == 0 {
		if err := os.Remove(filepath.Join(f.dir, f.pipeline+".lock")); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, f.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("checkpoint: remove the files of %s in %s: %w", f.pipeline, f.dir, err)
	}
	return nil
}

// Existed says the pipeline had an item before this store opened it (an
// open creates one).
func (d *DynamoDB) Existed() bool { return d.existed }

// ChunkItems is how many chunk items the pipeline's checkpoint takes
// beside its item (chunks.go), as of the lease.
func (d *DynamoDB) ChunkItems() int {
	if d.parts == nil {
		return 0
	}
	return d.parts.count
}

// Drop deletes the pipeline's item (checkpoint, lease, status snapshot,
// backfill request) and its checkpoint's chunk items, in one transaction
// conditional on this store's lease, and closes the store: a task that
// took the pipeline over meanwhile keeps it.
func (d *DynamoDB) Drop(ctx context.Context) error {
	d.mu.Lock()
	closed := d.closed
	d.closed = true
	d.mu.Unlock()
	if closed {
		return errClosed
	}
	d.stopHeartbeat()
	if err := d.lease.owned(); err != nil {
		return err
	}
	del := []types.TransactWriteItem{{Delete: &types.Delete{
		TableName:                 aws.String(d.opts.Table),
		Key:                       d.key(),
		ConditionExpression:       aws.String(ownedCond),
		ExpressionAttributeNames:  names(ownedCond),
		ExpressionAttributeValues: map[string]types.AttributeValue{":me": str(d.opts.Owner), ":epoch": num(d.epoch)},
	}}}
	if d.parts != nil {
		for i := range d.parts.count {
			del = append(del, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(d.opts.Table), Key: chunkKey(d.opts.Pipeline, d.parts.gen, i)}})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := d.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: del})
	d.lease.lose(fmt.Errorf("%w: dropped", ErrLeaseLost))
	if err != nil && isConditionFailed(err) {
		// The SDK retries a request whose reply it could not read: an
		// attempt that did delete the item then fails its own condition
		// on the retry. The item being gone is the drop done (its chunks
		// went in the same transaction); an item still there is
		// another owner's, and the error stands.
		if _, found, gerr := d.get(ctx); gerr == nil && !found {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("checkpoint: delete %s from table %s: %w", d.opts.Pipeline, d.opts.Table, err)
	}
	return nil
}

// holdFile is the file store's Kind.Hold: the lock, refused at once while
// run holds it.
func holdFile(_ context.Context, w Where) (*Held, error) {
	f, err := OpenFile(w.Path, w.Pipeline)
	if err != nil {
		return nil, err
	}
	h := &Held{}
	for _, p := range f.Contents() {
		h.Contents = append(h.Contents, "file "+p)
	}
	h.Drop = func(context.Context) error { return f.Drop() }
	h.Discard = h.Drop // the lock file the open made, when nothing else is left
	if len(h.Contents) > 0 {
		h.Discard = func(context.Context) error { return f.Close() }
	}
	return h, nil
}

// holdDynamoDB is the DynamoDB store's Kind.Hold: the lease, refused once
// its holder is seen renewing it (a holder that stopped is taken over
// after its lease). A missing table holds nothing.
func holdDynamoDB(ctx context.Context, w Where) (*Held, error) {
	nothing := func(context.Context) error { return nil }
	client, err := NewDynamoDBClient(ctx)
	if err != nil {
		return nil, err
	}
	w.log().Info("taking the pipeline's lease: a running task is refused once it renews it", "table", w.Table)
	d, err := OpenDynamoDB(ctx, client, DynamoDBOptions{Table: w.Table, Pipeline: w.Pipeline, RefuseRunning: true, Log: w.Log})
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return &Held{Drop: nothing, Discard: nothing}, nil
	}
	if err != nil {
		return nil, err
	}
	h := &Held{Drop: d.Drop}
	h.Discard = func(context.Context) error { d.Close(); return nil }
	if d.Existed() {
		what := fmt.Sprintf("checkpoint item %s in DynamoDB table %s (position, lease, status, backfill request)", w.Pipeline, w.Table)
		if n := d.ChunkItems(); n > 0 {
			what += fmt.Sprintf(", and its %d chunk items", n)
		}
		h.Contents = []string{what}
	} else {
		h.Discard = d.Drop // the item the open made
	}
	return h, nil
}
