package checkpoint

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The running task's status snapshot (JSON, written by pkg/status) is kept
// by the store that holds the pipeline, beside its checkpoint, where
// `tributary status` reads it without taking the pipeline over
// (Kind.Read): a file in the file store, an attribute of the pipeline's
// item in DynamoDB.

// statusPath is the file store's status snapshot of pipeline.
func statusPath(dir, pipeline string) string { return filepath.Join(dir, pipeline+".status.json") }

// SaveStatus keeps a status snapshot in <dir>/<pipeline>.status.json,
// replaced by rename so a reader never sees half of it.
func (f *File) SaveStatus(_ context.Context, snapshot []byte) error {
	tmp, err := os.CreateTemp(f.dir, f.pipeline+".status.json.tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(snapshot)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), statusPath(f.dir, f.pipeline))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// readFileStatus reads the snapshot File.SaveStatus keeps; nil when there
// is none.
func readFileStatus(dir, pipeline string) ([]byte, error) {
	data, err := os.ReadFile(statusPath(dir, pipeline))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return data, nil
}

// attrStatus holds the running task's status snapshot (JSON, written by
// pkg/status) in the pipeline's own item: the task role may write only
// that item (dynamodb:LeadingKeys), and every other write is an update,
// so the attribute survives checkpoints and lease renewals.
const attrStatus = "status"

// attrStatusGzip holds a snapshot over statusInline bytes, gzipped, in
// attrStatus's place. A snapshot still over maxStatusBytes gzipped is not
// stored: the item must keep room for the checkpoint (chunks.go) under
// DynamoDB's 400 KB.
const (
	attrStatusGzip = "status_gz"
	statusInline   = 32 << 10
	maxStatusBytes = 128 << 10
)

// SaveStatus stores a status snapshot in the pipeline's item, while this
// store holds the lease. It neither renews nor loses the lease: a failed
// condition is only an error here; Save and the heartbeat decide.
func (d *DynamoDB) SaveStatus(ctx context.Context, snapshot []byte) error {
	update := "SET #st = :st REMOVE #sz"
	var value types.AttributeValue = str(string(snapshot))
	if len(snapshot) > statusInline {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(snapshot)
		zw.Close()
		if buf.Len() > maxStatusBytes {
			return fmt.Errorf("checkpoint: status snapshot of %s is %d bytes (%d gzipped), over the %d KiB its item keeps for it: not saved",
				d.opts.Pipeline, len(snapshot), buf.Len(), maxStatusBytes>>10)
		}
		update, value = "SET #sz = :st REMOVE #st", &types.AttributeValueMemberB{Value: buf.Bytes()}
	}
	attrs := names(ownedCond)
	attrs["#st"], attrs["#sz"] = attrStatus, attrStatusGzip
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.opts.Table),
		Key:                       d.key(),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(ownedCond),
		ExpressionAttributeNames:  attrs,
		ExpressionAttributeValues: map[string]types.AttributeValue{":st": value, ":me": str(d.opts.Owner), ":epoch": num(d.epoch)},
	})
	if err != nil {
		return fmt.Errorf("checkpoint: save status of %s in table %s: %w", d.opts.Pipeline, d.opts.Table, err)
	}
	return nil
}

// ReadDynamoDBStatus reads the status snapshot SaveStatus stored, without
// taking the lease; nil when there is none.
func ReadDynamoDBStatus(ctx context.Context, client *dynamodb.Client, table, pipeline string) ([]byte, error) {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(table),
		Key:                      map[string]types.AttributeValue{attrPipeline: str(pipeline)},
		ProjectionExpression:     aws.String("#st, #sz"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus, "#sz": attrStatusGzip},
		ConsistentRead:           aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read status of %s in table %s: %w", pipeline, table, err)
	}
	if s, ok := out.Item[attrStatus].(*types.AttributeValueMemberS); ok {
		return []byte(s.Value), nil
	}
	if b, ok := out.Item[attrStatusGzip].(*types.AttributeValueMemberB); ok {
		zr, err := gzip.NewReader(bytes.NewReader(b.Value))
		if err != nil {
			return nil, fmt.Errorf("%w: status of %s in table %s is not gzip", ErrCorrupt, pipeline, table)
		}
		data, err := io.ReadAll(io.LimitReader(zr, maxUnzipped))
		if err != nil {
			return nil, fmt.Errorf("%w: status of %s in table %s is not gzip", ErrCorrupt, pipeline, table)
		}
		return data, nil
	}
	return nil, nil
}
