package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// DefaultLeaseDuration is how long a DynamoDB lease lasts without renewal.
// A crashed task's successor waits this long (plus a margin) before taking
// over; a task stopped with SIGTERM releases the lease at once.
const DefaultLeaseDuration = 20 * time.Second

// DynamoDBOptions configure OpenDynamoDB.
type DynamoDBOptions struct {
	Table    string // the table; its hash key is the string attribute "pipeline"
	Pipeline string
	// Owner identifies this task in the item and in logs; default
	// <hostname>-<pid>-<random>. It must be this store's alone: an item
	// naming it is taken for the work of this store's own write whose
	// reply was lost.
	Owner string
	// LeaseDuration is how long the lease lasts without renewal; default
	// DefaultLeaseDuration. The owner renews every third of it.
	LeaseDuration time.Duration
	// CreateTable creates the table (on-demand billing) when it is missing;
	// for local use: in AWS the CDK makes it.
	CreateTable bool
	// RefuseRunning makes the open fail with ErrOwned once it sees the
	// holder renew its lease, instead of waiting for it to let go (for
	// `tributary drop`); a holder that stopped renewing is still taken
	// over after its lease.
	RefuseRunning bool
	Log           *slog.Logger
}

// DynamoDB is the checkpoint store in AWS: one item per pipeline in a
// DynamoDB table, holding the position, the lease (owner, heartbeat counter,
// lease duration) and a fencing epoch. Every write is conditional: a new
// item on its absence, a takeover on the epoch and heartbeat its author
// watched, a checkpoint or renewal on the owner and epoch. See lease.go for
// the timing argument.
type DynamoDB struct {
	client *dynamodb.Client
	opts   DynamoDBOptions
	epoch  int64
	lease  *lease
	log    *slog.Logger

	stop     chan struct{} // closed by stopHeartbeat
	stopOnce sync.Once
	done     chan struct{} // closed when the heartbeat goroutine returned

	mu     sync.Mutex
	closed bool

	// parts is the chunked checkpoint the item points to (chunks.go), nil
	// when the checkpoint is in the item; saves numbers this owner's
	// chunked saves, for their generation.
	parts *parts
	saves int
	// existed says the pipeline had an item before this store took it.
	existed bool
}

var _ Store = (*DynamoDB)(nil)

// Item attribute names. The table's only key is attrPipeline.
const (
	attrPipeline  = "pipeline"
	attrPosition  = "position"
	attrOwner     = "owner"
	attrEpoch     = "epoch"
	attrHeartbeat = "heartbeat"
	attrLeaseMS   = "lease_ms"
	attrUpdatedAt = "updated_at"
	attrVersion   = "version"
	attrReceipts  = "receipts" // JSON list of Receipt (receipt.go)
	attrDelivery  = "delivery" // the delivery mode that wrote the checkpoint
)

// itemVersion is the item format written; decodeItem refuses newer ones.
const itemVersion = 1

// OpenDynamoDB takes the pipeline's lease in opts.Table and returns the
// store, renewing the lease in the background until Close. While another
// task holds the lease it waits (logging who holds it) until that task
// releases it, or stops renewing it for its lease duration, or ctx ends.
func OpenDynamoDB(ctx context.Context, client *dynamodb.Client, opts DynamoDBOptions) (*DynamoDB, error) {
	if opts.Pipeline == "" || opts.Table == "" {
		return nil, errors.New("checkpoint: dynamodb store needs a table and a pipeline")
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = DefaultLeaseDuration
	}
	if opts.Owner == "" {
		opts.Owner = defaultOwner()
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	d := &DynamoDB{
		client: client,
		opts:   opts,
		lease:  newLease(opts.LeaseDuration),
		log:    opts.Log.With("checkpoint_table", opts.Table, "lease_owner", opts.Owner),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	if opts.CreateTable {
		if err := d.ensureTable(ctx); err != nil {
			return nil, err
		}
	}
	if err := d.acquire(ctx); err != nil {
		return nil, err
	}
	go d.heartbeat()
	return d, nil
}

// NewDynamoDBClient is a DynamoDB client from the SDK's standard
// environment (AWS_REGION, AWS_ENDPOINT_URL, the credentials chain).
func NewDynamoDBClient(ctx context.Context) (*dynamodb.Client, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: AWS configuration: %w", err)
	}
	return dynamodb.NewFromConfig(awsCfg), nil
}

func defaultOwner() string {
	host, _ := os.Hostname()
	var b [4]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b[:]))
}

// Epoch is the fencing epoch this store holds the lease with.
func (d *DynamoDB) Epoch() int64 { return d.epoch }

// Owner is this store's owner id.
func (d *DynamoDB) Owner() string { return d.opts.Owner }

func (d *DynamoDB) key() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrPipeline: &types.AttributeValueMemberS{Value: d.opts.Pipeline}}
}

func num(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}
func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

var leaseNames = map[string]string{
	"#o": attrOwner, "#e": attrEpoch, "#h": attrHeartbeat, "#l": attrLeaseMS,
	"#u": attrUpdatedAt, "#v": attrVersion, "#p": attrPosition, "#k": attrPipeline,
	"#r": attrReceipts, "#d": attrDelivery, "#pt": attrParts,
}

// names returns the expression attribute names used in expr: DynamoDB
// rejects unused ones.
func names(expr ...string) map[string]string {
	out := map[string]string{}
	for n, a := range leaseNames {
		for _, e := range expr {
			if containsWord(e, n) {
				out[n] = a
			}
		}
	}
	return out
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w && (i+len(w) == len(s) || !isNameChar(s[i+len(w)])) {
			return true
		}
	}
	return false
}

func isNameChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// isConditionFailed tells a failed condition, of an update or of the
// transaction of a chunked save.
func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return true
	}
	var tc *types.TransactionCanceledException
	if errors.As(err, &tc) {
		for _, r := range tc.CancellationReasons {
			if aws.ToString(r.Code) == "ConditionalCheckFailed" {
				return true
			}
		}
	}
	return false
}

// get reads the pipeline's item with a strongly consistent read.
func (d *DynamoDB) get(ctx context.Context) (item, bool, error) {
	out, err := d.client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.opts.Table), Key: d.key(), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return item{}, false, fmt.Errorf("checkpoint: read %s from table %s: %w", d.opts.Pipeline, d.opts.Table, err)
	}
	if len(out.Item) == 0 {
		return item{}, false, nil
	}
	it, err := decodeItem(out.Item)
	if err != nil {
		return item{}, false, fmt.Errorf("%w: item %s in table %s: %v", ErrCorrupt, d.opts.Pipeline, d.opts.Table, err)
	}
	if it.Pipeline != d.opts.Pipeline {
		return item{}, false, fmt.Errorf("%w: item %s in table %s names pipeline %q", ErrCorrupt, d.opts.Pipeline, d.opts.Table, it.Pipeline)
	}
	return it, true, nil
}

// acquire takes the lease: on a missing item, a released lease, or one its
// holder stopped renewing for a full lease period.
func (d *DynamoDB) acquire(ctx context.Context) error {
	var obs observation
	logged := ""
	var holder item // the last holder seen waiting, if any
	for {
		it, found, err := d.get(ctx)
		if err != nil {
			if ctx.Err() != nil && holder.Owner != "" {
				// Gave up waiting (the deadline may hit mid-request).
				return fmt.Errorf("%w: held by %s (epoch %d): %w", ErrOwned, holder.Owner, holder.Epoch, ctx.Err())
			}
			return err
		}
		sent := time.Now()
		switch {
		case !found:
			err = d.create(ctx)
			if err == nil {
				d.epoch = 1
			}
		case it.Owner == d.opts.Owner:
			// This task's own create or take, whose reply the SDK could not
			// read: its retry failed the condition the first attempt had
			// met. The owner id is this process's alone (defaultOwner).
			d.epoch = it.Epoch
		case it.Owner == "":
			err = d.take(ctx, it, "attribute_not_exists(#o) AND #e = :seen")
		default:
			prev := obs
			obs = observe(obs, it, sent)
			if d.opts.RefuseRunning && !prev.since.IsZero() && obs != prev {
				return fmt.Errorf("%w: held by %s (epoch %d), which renewed its lease just now", ErrOwned, it.Owner, it.Epoch)
			}
			holder = it
			wait := takeoverWait(it.leaseDuration(d.opts.LeaseDuration))
			if time.Since(obs.since) >= wait {
				err = d.take(ctx, it, "#o = :holder AND #e = :seen AND #h = :hb")
				if err == nil {
					d.log.Warn("took over the lease of a task that stopped renewing it",
						"pipeline", d.opts.Pipeline, "previous_owner", it.Owner, "previous_epoch", it.Epoch, "waited", wait)
				}
				break
			}
			if logged != it.Owner {
				d.log.Info("pipeline is leased by another task; waiting until it releases the lease or stops renewing it",
					"pipeline", d.opts.Pipeline, "holder", it.Owner, "epoch", it.Epoch, "lease", wait)
				logged = it.Owner
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("%w: held by %s (epoch %d): %w", ErrOwned, it.Owner, it.Epoch, ctx.Err())
			case <-time.After(min(pollEvery(d.opts.LeaseDuration), wait-time.Since(obs.since)+10*time.Millisecond)):
			}
			continue
		}
		switch {
		case err == nil:
			d.parts = it.Parts // found or not: the chunks the next save replaces
			d.existed = found
			d.lease.renewed(sent)
			d.log.Info("lease acquired", "pipeline", d.opts.Pipeline, "epoch", d.epoch, "lease", d.opts.LeaseDuration)
			return nil
		case isConditionFailed(err):
			continue // somebody else moved first: look again
		default:
			return fmt.Errorf("checkpoint: take the lease of %s in table %s: %w", d.opts.Pipeline, d.opts.Table, err)
		}
	}
}

// create writes the first item of the pipeline, epoch 1.
func (d *DynamoDB) create(ctx context.Context) error {
	it := map[string]types.AttributeValue{
		attrPipeline:  str(d.opts.Pipeline),
		attrOwner:     str(d.opts.Owner),
		attrEpoch:     num(1),
		attrHeartbeat: num(0),
		attrLeaseMS:   num(d.opts.LeaseDuration.Milliseconds()),
		attrVersion:   num(itemVersion),
		attrUpdatedAt: str(time.Now().UTC().Format(time.RFC3339Nano)),
	}
	_, err := d.client.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(d.opts.Table),
		Item:                     it,
		ConditionExpression:      aws.String("attribute_not_exists(#k)"),
		ExpressionAttributeNames: names("#k"),
	})
	return err
}

// take makes this task the owner with the next epoch, if cond (over the
// seen epoch, heartbeat and holder) still holds.
func (d *DynamoDB) take(ctx context.Context, seen item, cond string) error {
	const update = "SET #o = :me, #e = :next, #h = :zero, #l = :lease"
	values := map[string]types.AttributeValue{
		":me": str(d.opts.Owner), ":next": num(seen.Epoch + 1), ":zero": num(0),
		":lease": num(d.opts.LeaseDuration.Milliseconds()), ":seen": num(seen.Epoch),
	}
	if containsWord(cond, ":hb") {
		values[":hb"] = num(seen.Heartbeat)
	}
	if containsWord(cond, ":holder") {
		values[":holder"] = str(seen.Owner)
	}
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.opts.Table),
		Key:                       d.key(),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names(update, cond),
		ExpressionAttributeValues: values,
	})
	if err == nil {
		d.epoch = seen.Epoch + 1
	}
	return err
}

// owned is the condition of every write of the holder.
const ownedCond = "#o = :me AND #e = :epoch"

// write runs an owner's conditional update, in one transaction with
// chunks when there are any (chunks.go). A failed condition means the
// pipeline was taken over: the lease is lost for good.
func (d *DynamoDB) write(ctx context.Context, update string, values map[string]types.AttributeValue, chunks ...types.TransactWriteItem) error {
	values[":me"] = str(d.opts.Owner)
	values[":epoch"] = num(d.epoch)
	sent := time.Now()
	var err error
	if len(chunks) == 0 {
		_, err = d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                 aws.String(d.opts.Table),
			Key:                       d.key(),
			UpdateExpression:          aws.String(update),
			ConditionExpression:       aws.String(ownedCond),
			ExpressionAttributeNames:  names(update, ownedCond),
			ExpressionAttributeValues: values,
		})
	} else {
		_, err = d.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{{Update: &types.Update{
			TableName:                 aws.String(d.opts.Table),
			Key:                       d.key(),
			UpdateExpression:          aws.String(update),
			ConditionExpression:       aws.String(ownedCond),
			ExpressionAttributeNames:  names(update, ownedCond),
			ExpressionAttributeValues: values,
		}}}, chunks...)})
	}
	if err == nil {
		d.lease.renewed(sent)
		return nil
	}
	if isConditionFailed(err) {
		lost := fmt.Errorf("%w: another task took over the pipeline (this task held epoch %d)", ErrLeaseLost, d.epoch)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		if it, found, gerr := d.get(rctx); gerr == nil && found {
			lost = fmt.Errorf("%w: task %s took over the pipeline with epoch %d (this task held epoch %d)", ErrLeaseLost, it.Owner, it.Epoch, d.epoch)
		}
		cancel()
		d.lease.lose(lost)
		return lost
	}
	return fmt.Errorf("checkpoint: write %s in table %s: %w", d.opts.Pipeline, d.opts.Table, err)
}

// heartbeat renews the lease every third of its duration until Close or
// until the lease is lost (renewals failing for a whole lease count).
func (d *DynamoDB) heartbeat() {
	defer close(d.done)
	every := renewEvery(d.opts.LeaseDuration)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-d.stop:
			return
		case <-d.lease.lost:
			return
		case <-tick.C:
		}
		if err := d.lease.owned(); err != nil {
			d.log.Error("lease expired: renewals failed for a whole lease period", "err", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), max(d.lease.remaining(), every))
		err := d.write(ctx, "SET #h = #h + :one, #l = :lease", map[string]types.AttributeValue{
			":one": num(1), ":lease": num(d.opts.LeaseDuration.Milliseconds()),
		})
		cancel()
		if err != nil {
			if errors.Is(err, ErrLeaseLost) {
				d.log.Error("lease lost", "err", err)
				return
			}
			d.log.Warn("lease renewal failed; retrying", "err", err, "remaining", d.lease.remaining())
		}
	}
}

// stopHeartbeat ends the renewals and waits for the goroutine.
func (d *DynamoDB) stopHeartbeat() {
	d.stopOnce.Do(func() { close(d.stop) })
	<-d.done
}

// Owned implements Store.
func (d *DynamoDB) Owned() error { return d.lease.owned() }

// Lost implements Store.
func (d *DynamoDB) Lost() <-chan struct{} { return d.lease.lost }

// Load implements Store. It also checks that this task still owns the
// pipeline.
func (d *DynamoDB) Load(ctx context.Context) (Checkpoint, bool, error) {
	if err := d.Owned(); err != nil {
		return Checkpoint{}, false, err
	}
	it, found, err := d.getWhole(ctx)
	if err != nil {
		return Checkpoint{}, false, err
	}
	if !found || it.Owner != d.opts.Owner || it.Epoch != d.epoch {
		err := fmt.Errorf("%w: the item now names owner %q epoch %d", ErrLeaseLost, it.Owner, it.Epoch)
		d.lease.lose(err)
		return Checkpoint{}, false, err
	}
	d.parts = it.Parts
	cp := Checkpoint{Pipeline: it.Pipeline, Position: it.Position, UpdatedAt: it.UpdatedAt, Owner: it.Owner, Epoch: it.Epoch, Receipts: it.Receipts, Delivery: it.Delivery}
	return cp, it.Position != nil, nil
}

// Save implements Store: a write conditional on owner and epoch, which
// also renews the lease.
func (d *DynamoDB) Save(ctx context.Context, cp Checkpoint) error {
	if cp.Pipeline != "" && cp.Pipeline != d.opts.Pipeline {
		return fmt.Errorf("checkpoint: saving pipeline %q in the store of %q", cp.Pipeline, d.opts.Pipeline)
	}
	if cp.Position == nil || !json.Valid(cp.Position) {
		return errors.New("checkpoint: position is not valid JSON")
	}
	if err := d.Owned(); err != nil {
		return err
	}
	if cp.UpdatedAt.IsZero() {
		cp.UpdatedAt = time.Now()
	}
	values := map[string]types.AttributeValue{
		":ts": str(cp.UpdatedAt.UTC().Format(time.RFC3339Nano)), ":one": num(1),
	}
	update := "SET #u = :ts, #v = :ver, #h = #h + :one"
	if cp.Delivery != "" {
		update += ", #d = :del"
		values[":del"] = str(cp.Delivery)
	}
	receipts, err := encodeReceipts(cp.Receipts)
	if err != nil {
		return err
	}
	// The previous generation's chunks go with this write.
	var chunks []types.TransactWriteItem
	if d.parts != nil {
		for i := range d.parts.count {
			chunks = append(chunks, types.TransactWriteItem{Delete: &types.Delete{
				TableName: aws.String(d.opts.Table), Key: chunkKey(d.opts.Pipeline, d.parts.gen, i),
			}})
		}
	}
	var next *parts
	if len(cp.Position)+len(receipts) <= inlineLimit {
		update += ", #p = :pos"
		values[":pos"], values[":ver"] = str(string(cp.Position)), num(itemVersion)
		if receipts != nil {
			update += ", #r = :rec"
			values[":rec"] = str(string(receipts))
		}
		if d.parts != nil {
			update += " REMOVE #pt"
		}
	} else {
		data, digest, err := split(cp.Position, cp.Receipts)
		if err != nil {
			return err
		}
		d.saves++
		next = &parts{gen: fmt.Sprintf("%d.%d", d.epoch, d.saves), count: len(data), digest: digest}
		for i, b := range data {
			item := chunkKey(d.opts.Pipeline, next.gen, i)
			item[attrData] = &types.AttributeValueMemberB{Value: b}
			chunks = append(chunks, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(d.opts.Table), Item: item}})
		}
		update += ", #pt = :parts REMOVE #p, #r"
		values[":parts"], values[":ver"] = str(next.String()), num(chunkedItemVersion)
	}
	if err := d.write(ctx, update, values, chunks...); err != nil {
		return err
	}
	d.parts = next
	return nil
}

// Close implements Store: it stops renewing and releases the lease (a
// conditional write), so that a successor starts at once. A lost lease is
// not released: it is somebody else's.
func (d *DynamoDB) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	d.stopHeartbeat()
	if d.lease.owned() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := d.write(ctx, "REMOVE #o SET #h = #h + :one", map[string]types.AttributeValue{":one": num(1)})
	if errors.Is(err, ErrLeaseLost) {
		// The SDK retries a request whose reply it could not read: when
		// the first attempt released the lease, the retry finds no owner.
		// The item released at this store's epoch was released by it (a
		// takeover moves the epoch).
		if it, found, gerr := d.get(ctx); gerr == nil && found && it.Owner == "" && it.Epoch == d.epoch {
			err = nil
		}
	}
	d.lease.lose(fmt.Errorf("%w: released", ErrLeaseLost))
	if err != nil {
		return fmt.Errorf("checkpoint: release the lease: %w", err)
	}
	d.log.Info("lease released", "pipeline", d.opts.Pipeline, "epoch", d.epoch)
	return nil
}

// ensureTable creates the table when it is missing and waits until it is
// active.
func (d *DynamoDB) ensureTable(ctx context.Context) error {
	_, err := d.client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.opts.Table)})
	var nf *types.ResourceNotFoundException
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &nf):
		return fmt.Errorf("checkpoint: describe table %s: %w", d.opts.Table, err)
	}
	_, err = d.client.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(d.opts.Table),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String(attrPipeline), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String(attrPipeline), KeyType: types.KeyTypeHash}},
		BillingMode:          types.BillingModePayPerRequest,
	})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("checkpoint: create table %s: %w", d.opts.Table, err)
	}
	if err == nil {
		d.log.Info("created checkpoint table", "table", d.opts.Table)
	}
	w := dynamodb.NewTableExistsWaiter(d.client, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, 2*time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(d.opts.Table)}, 2*time.Minute); err != nil {
		return fmt.Errorf("checkpoint: table %s did not become active: %w", d.opts.Table, err)
	}
	return nil
}

// item is one pipeline's item, decoded.
type item struct {
	Pipeline  string
	Position  change.Position // nil before the first checkpoint
	Owner     string          // "" when released
	Epoch     int64
	Heartbeat int64
	LeaseMS   int64
	UpdatedAt time.Time
	Receipts  []Receipt
	Delivery  string
	Parts     *parts // a chunked checkpoint: Position and Receipts are in its chunks
}

// leaseDuration is the holder's declared lease, or def when it has none.
func (it item) leaseDuration(def time.Duration) time.Duration {
	if it.LeaseMS <= 0 || it.LeaseMS > int64(24*time.Hour/time.Millisecond) {
		return def
	}
	return time.Duration(it.LeaseMS) * time.Millisecond
}

// decodeItem reads an item as DynamoDB returned it. The table may be
// written by other versions or by hand: every field is checked, and errors
// never quote the position.
func decodeItem(av map[string]types.AttributeValue) (item, error) {
	var it item
	var err error
	if it.Pipeline, err = getS(av, attrPipeline, true); err != nil {
		return it, err
	}
	if v, err := getN(av, attrVersion, false); err != nil {
		return it, err
	} else if v > chunkedItemVersion {
		return it, fmt.Errorf("unsupported item version %d", v)
	}
	if it.Owner, err = getS(av, attrOwner, false); err != nil {
		return it, err
	}
	if it.Epoch, err = getN(av, attrEpoch, true); err != nil {
		return it, err
	}
	if it.Heartbeat, err = getN(av, attrHeartbeat, false); err != nil {
		return it, err
	}
	if it.LeaseMS, err = getN(av, attrLeaseMS, false); err != nil {
		return it, err
	}
	if it.Epoch < 0 || it.Heartbeat < 0 || it.LeaseMS < 0 {
		return it, errors.New("negative epoch, heartbeat or lease_ms")
	}
	pos, err := getS(av, attrPosition, false)
	if err != nil {
		return it, err
	}
	if pos != "" {
		if !json.Valid([]byte(pos)) {
			return it, errors.New("position is not JSON")
		}
		it.Position = change.Position(pos)
	}
	rec, err := getS(av, attrReceipts, false)
	if err != nil {
		return it, err
	}
	pt, err := getS(av, attrParts, false)
	if err != nil {
		return it, err
	}
	if pt != "" {
		if pos != "" || rec != "" {
			return it, errors.New("both a position and chunks")
		}
		if it.Parts, err = parseParts(pt); err != nil {
			return it, err
		}
	}
	if it.Receipts, err = decodeReceipts([]byte(rec)); err != nil {
		return it, err
	}
	if it.Delivery, err = getS(av, attrDelivery, false); err != nil {
		return it, err
	}
	ts, err := getS(av, attrUpdatedAt, false)
	if err != nil {
		return it, err
	}
	if ts != "" {
		if it.UpdatedAt, err = time.Parse(time.RFC3339Nano, ts); err != nil {
			return it, errors.New("updated_at is not an RFC 3339 time")
		}
	}
	return it, nil
}

func getS(av map[string]types.AttributeValue, name string, required bool) (string, error) {
	v, ok := av[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("no %s", name)
		}
		return "", nil
	}
	s, ok := v.(*types.AttributeValueMemberS)
	if !ok {
		return "", fmt.Errorf("%s is not a string", name)
	}
	return s.Value, nil
}

func getN(av map[string]types.AttributeValue, name string, required bool) (int64, error) {
	v, ok := av[name]
	if !ok || v == nil {
		if required {
			return 0, fmt.Errorf("no %s", name)
		}
		return 0, nil
	}
	n, ok := v.(*types.AttributeValueMemberN)
	if !ok {
		return 0, fmt.Errorf("%s is not a number", name)
	}
	i, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s is not an integer", name)
	}
	return i, nil
}

// getWhole is get, with a chunked checkpoint's position and receipts read
// from its chunks. A save between the two reads deletes the chunks read
// of: the item is then read again.
func (d *DynamoDB) getWhole(ctx context.Context) (item, bool, error) {
	for attempt := 1; ; attempt++ {
		it, found, err := d.get(ctx)
		if err != nil || !found || it.Parts == nil {
			return it, found, err
		}
		it.Position, it.Receipts, err = join(ctx, d.client, d.opts.Table, d.opts.Pipeline, *it.Parts)
		if errors.Is(err, errChunkMissing) && attempt < 5 {
			continue
		}
		if errors.Is(err, errChunkMissing) {
			err = fmt.Errorf("%w: item %s in table %s: %v", ErrCorrupt, d.opts.Pipeline, d.opts.Table, err)
		}
		return it, found, err
	}
}
