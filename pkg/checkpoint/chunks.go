package checkpoint

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// A DynamoDB item holds at most 400 KB, and a pipeline's item also holds
// the lease, the status snapshot (status.go) and the backfill request. A
// position can outgrow it: a MySQL schema history (pkg/source/mysql,
// history.go) keeps every table's shape, and receipts take up to
// maxReceiptsBytes. A checkpoint whose position and receipts are over
// inlineLimit is therefore kept in chunk items beside the pipeline's: the
// two, gzipped, cut into chunks of chunkBytes under the keys
// <pipeline>#checkpoint#<generation>#<i>. One transaction writes the
// chunks of the new generation, deletes those of the previous one, and
// updates the pipeline's item (conditional on owner and epoch, as every
// write of the holder) to point to the new ones, so a stale owner writes
// nothing and a crash leaves either checkpoint whole. A generation is
// never rewritten (<epoch>.<save number>): a reader that read the
// pointer of a generation just deleted finds a chunk missing and reads
// again.
const (
	inlineLimit = 64 << 10
	chunkBytes  = 300 << 10
	// maxChunks bounds a checkpoint to 3 MB gzipped: one transaction holds
	// at most 4 MB (AWS) and 25 actions (moto; AWS allows 100), here
	// maxChunks puts, maxChunks deletes and the pipeline's update.
	maxChunks = 10
	// maxUnzipped bounds what the chunks unzip to, so that data written by
	// hand cannot make a reader allocate without end.
	maxUnzipped = 256 << 20
)

// attrParts is the pipeline item's pointer to its chunks, as
// "<generation> <chunks> <sha256 of the gzipped data>"; attrData holds a
// chunk's bytes.
const (
	attrParts = "parts"
	attrData  = "data"
)

// chunkedItemVersion is the item version of a chunked checkpoint: a release
// that cannot read chunks refuses the item instead of finding no position
// in it and starting over.
const chunkedItemVersion = 2

// parts locates a chunked checkpoint.
type parts struct {
	gen    string
	count  int
	digest string
}

func (p parts) String() string { return fmt.Sprintf("%s %d %s", p.gen, p.count, p.digest) }

func parseParts(s string) (*parts, error) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return nil, errors.New("parts is not <generation> <chunks> <sha256>")
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 1 || n > maxChunks || len(f[2]) != sha256.Size*2 {
		return nil, errors.New("parts has a bad chunk count or digest")
	}
	return &parts{gen: f[0], count: n, digest: f[2]}, nil
}

func chunkKey(pipeline, gen string, i int) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPipeline: str(fmt.Sprintf("%s#checkpoint#%s#%d", pipeline, gen, i))}
}

// chunked is what the chunks hold.
type chunked struct {
	Position json.RawMessage `json:"position"`
	Receipts []Receipt       `json:"receipts,omitempty"`
}

// split gzips position and receipts and cuts them into chunks; an error
// when they do not fit in maxChunks.
func split(pos change.Position, receipts []Receipt) ([][]byte, string, error) {
	raw, err := json.Marshal(chunked{Position: json.RawMessage(pos), Receipts: receipts})
	if err != nil {
		return nil, "", fmt.Errorf("checkpoint: encode: %w", err)
	}
	if len(raw) > maxUnzipped {
		return nil, "", fmt.Errorf("checkpoint: position and receipts are %d bytes, over the %d MiB a checkpoint can hold", len(raw), maxUnzipped>>20)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(raw)
	zw.Close()
	data := buf.Bytes()
	if len(data) > maxChunks*chunkBytes {
		return nil, "", fmt.Errorf("checkpoint: position and receipts are %d bytes (%d gzipped), over the %d MB a checkpoint can hold in DynamoDB",
			len(raw), len(data), maxChunks*chunkBytes/1000000)
	}
	var chunks [][]byte
	for len(data) > 0 {
		n := min(len(data), chunkBytes)
		chunks = append(chunks, data[:n])
		data = data[n:]
	}
	sum := sha256.Sum256(buf.Bytes())
	return chunks, hex.EncodeToString(sum[:]), nil
}

// errChunkMissing: a chunk of the generation read is gone (a save replaced
// it since): read the pipeline's item again.
var errChunkMissing = errors.New("a checkpoint chunk is missing")

// join reads the chunks p points to back into a position and receipts.
func join(ctx context.Context, client *dynamodb.Client, table, pipeline string, p parts) (change.Position, []Receipt, error) {
	var data []byte
	for i := range p.count {
		out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(table), Key: chunkKey(pipeline, p.gen, i), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return nil, nil, fmt.Errorf("checkpoint: read chunk %d of %s from table %s: %w", i, pipeline, table, err)
		}
		b, ok := out.Item[attrData].(*types.AttributeValueMemberB)
		if !ok {
			return nil, nil, errChunkMissing
		}
		data = append(data, b.Value...)
	}
	pos, receipts, err := decodeChunks(data, p.digest)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: item %s in table %s: %v", ErrCorrupt, pipeline, table, err)
	}
	return pos, receipts, nil
}

// decodeChunks reads the chunks' data, joined, as split wrote it. The
// table may be written by hand: its errors do not quote the data.
func decodeChunks(data []byte, digest string) (change.Position, []Receipt, error) {
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != digest {
		return nil, nil, errors.New("its chunks do not match their digest")
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, errors.New("its chunks are not gzip")
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxUnzipped+1))
	if err != nil {
		return nil, nil, errors.New("its chunks are not gzip")
	}
	if len(raw) > maxUnzipped {
		return nil, nil, fmt.Errorf("its chunks unzip to over %d MiB", maxUnzipped>>20)
	}
	var c chunked
	if err := json.Unmarshal(raw, &c); err != nil || !json.Valid(c.Position) {
		return nil, nil, errors.New("its chunks do not hold a position")
	}
	if len(c.Receipts) > 0 {
		b, _ := json.Marshal(c.Receipts)
		if _, err := decodeReceipts(b); err != nil {
			return nil, nil, err
		}
	}
	return change.Position(c.Position), c.Receipts, nil
}
