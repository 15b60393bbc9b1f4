package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Reading a pipeline's checkpoint without taking it over, for `tributary
// status`: it works while the owner runs.

// ReadFile reads a pipeline's checkpoint from the file store in dir without
// taking the lock, for status displays: it works while the owner runs.
// Save replaces the file by rename, so a reader sees the old checkpoint or
// the new one, whole. found is false when none was ever saved; a missing
// dir is not an error.
func ReadFile(ctx context.Context, dir, pipeline string) (Checkpoint, bool, error) {
	if err := ctx.Err(); err != nil {
		return Checkpoint{}, false, err
	}
	if !validPipeline.MatchString(pipeline) {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: pipeline name %q cannot name a file", pipeline)
	}
	path := filepath.Join(dir, pipeline+".checkpoint.json")
	data, err := readLimited(path)
	if errors.Is(err, os.ErrNotExist) {
		return Checkpoint{}, false, nil
	}
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("checkpoint: %w", err)
	}
	if len(data) > maxFileBytes {
		return Checkpoint{}, false, fmt.Errorf("%w %s: larger than %d MiB", ErrCorrupt, path, maxFileBytes>>20)
	}
	cp, err := decodeFile(data, pipeline)
	if err != nil {
		return Checkpoint{}, false, fmt.Errorf("%w %s: %v", ErrCorrupt, path, err)
	}
	return cp, true, nil
}

// FileHolder returns the process id recorded in a pipeline's lock file (a
// hint: the flock is the lock), or 0.
func FileHolder(dir, pipeline string) int {
	var pid int
	if b, err := os.ReadFile(filepath.Join(dir, pipeline+".lock")); err == nil {
		fmt.Sscanf(string(b), "%d", &pid)
	}
	return pid
}

// ReadDynamoDB reads a pipeline's checkpoint and lease holder without
// taking the lease, for status displays. found is false when the pipeline
// has no checkpoint yet.
func ReadDynamoDB(ctx context.Context, client *dynamodb.Client, table, pipeline string) (Checkpoint, bool, error) {
	d := &DynamoDB{client: client, opts: DynamoDBOptions{Table: table, Pipeline: pipeline}}
	it, found, err := d.getWhole(ctx)
	if err != nil || !found {
		return Checkpoint{}, false, err
	}
	cp := Checkpoint{Pipeline: it.Pipeline, Position: it.Position, UpdatedAt: it.UpdatedAt, Owner: it.Owner, Epoch: it.Epoch, Receipts: it.Receipts, Delivery: it.Delivery}
	return cp, it.Position != nil, nil
}

// readFileKind is the file store's Kind.Read.
func readFileKind(ctx context.Context, w Where) (Checkpoint, bool, []byte, error) {
	cp, found, err := ReadFile(ctx, w.Path, w.Pipeline)
	if err != nil {
		return cp, false, nil, err
	}
	st, err := readFileStatus(w.Path, w.Pipeline)
	if err != nil {
		return cp, false, nil, err
	}
	return cp, found, st, nil
}

// readDynamoDBKind is the DynamoDB store's Kind.Read. A missing table
// (create_table makes it on the first run) holds nothing.
func readDynamoDBKind(ctx context.Context, w Where) (Checkpoint, bool, []byte, error) {
	client, err := NewDynamoDBClient(ctx)
	if err != nil {
		return Checkpoint{}, false, nil, err
	}
	cp, found, err := ReadDynamoDB(ctx, client, w.Table, w.Pipeline)
	var missing *types.ResourceNotFoundException
	if errors.As(err, &missing) {
		return Checkpoint{}, false, nil, nil
	}
	if err != nil {
		return Checkpoint{}, false, nil, err
	}
	st, err := ReadDynamoDBStatus(ctx, client, w.Table, w.Pipeline)
	if err != nil {
		return Checkpoint{}, false, nil, err
	}
	return cp, found, st, nil
}
