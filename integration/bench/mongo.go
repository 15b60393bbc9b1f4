package main

// The MongoDB side: a collection `bench` of documents with the fields and values of the
// relational table's rows (data.go), and the same batches of changes: batch b inserts
// _ids 60b..60b+59, updates 30 documents of batch b-1 and deletes 10 others of it.
//
// Debezium's MongoDB connector cannot run against mongo-java-server (docs/mongodb.md),
// so the peers are ceilings: this program re-executed as `bench mongo-read stream …` (a
// change stream on the collection read from a resume token, fullDocument updateLookup as
// Tributary's default capture mode asks) and `bench mongo-read find …` (every document in
// _id order), each with the same Go driver, decoding nothing and doing nothing else.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-cdc/tributary/pkg/snapshot"
	"github.com/tributary-cdc/tributary/pkg/source/mongodb"
)

const (
	srcMongoDB = "mongodb"

	sysStreamReader = "change-stream-reader (source ceiling)"
	sysFindReader   = "find-reader (source ceiling)"
	sysPagedReader  = "paged-find-reader (source ceiling)"
)

// mongoURL is the server of make services-up, or BENCH_MONGODB_URL, or the bench's own
// (BENCH_MONGODB_FRESH): mongo-java-server keeps every document it was ever sent in its heap,
// and answers each change-stream poll over all of them, so a server of the run's own
// measures without what earlier runs left there.
var mongoURL = cmp.Or(os.Getenv("BENCH_MONGODB_URL"), "mongodb://127.0.0.1:27017/?directConnection=true")

// mongoFreshPort, from BENCH_MONGODB_FRESH, is the loopback port of a mongo-java-server that
// the bench starts again, empty, before each MongoDB run (make bench sets it; a
// BENCH_MONGODB_URL of the user's own wins over it). On one server
// for all, three backfill-mongodb runs of 100,000 documents in a row made 41,183, 27,202 and
// 19,678 documents/s: each run's change-stream polls went over the oplog every run before
// had left, which the bare readers, which never poll, do not pay.
var mongoFreshPort = func() string {
	if os.Getenv("BENCH_MONGODB_URL") != "" {
		return ""
	}
	return os.Getenv("BENCH_MONGODB_FRESH")
}()

// mongoOwn is the server the bench started last (BENCH_MONGODB_FRESH).
var mongoOwn *exec.Cmd

// mongoRestart stops the bench's own mongo-java-server, if it started one, and starts it
// again, empty, on mongoFreshPort with the jars make services-up fetched (MONGO_HEAP, 2g by
// default, as integration/services/mongo.sh); it returns once the server answers.
func (b *bench) mongoRestart(ctx context.Context) error {
	mongoStop()
	home := filepath.Join(b.p.repo, ".services", "mongo")
	cmd := exec.Command("java", "-Xmx"+envStr("MONGO_HEAP", "2g"), "-cp", filepath.Join(home, "classes")+":"+filepath.Join(home, "lib", "*"),
		"MongoServerMain", "127.0.0.1", mongoFreshPort)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// The server goes with the bench, however the bench ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start mongo-java-server (make services-up fetches it): %w", err)
	}
	mongoOwn = cmd
	mongoURL = "mongodb://127.0.0.1:" + mongoFreshPort + "/?directConnection=true"
	deadline := time.Now().Add(time.Minute)
	for {
		c, err := mongoConnect(ctx)
		if err == nil {
			return c.Disconnect(context.Background())
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			mongoStop()
			return fmt.Errorf("mongo-java-server on port %s did not answer within a minute: %w\n%s", mongoFreshPort, err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// mongoStop stops the bench's own mongo-java-server, if it runs.
func mongoStop() {
	if mongoOwn != nil {
		mongoOwn.Process.Kill()
		mongoOwn.Wait()
		mongoOwn = nil
	}
}

// mongoPage is the paged find-reader's page: the chunk Tributary reads one collection in
// while its stream is idle, at the default snapshot parallelism.
var mongoPage = mongodb.ChunkRows / snapshot.DefaultParallelism

func isMongo(sc string) bool { return sc == scStreamingMongoDB || sc == scBackfillMongoDB }

func mongoConnect(ctx context.Context) (*mongo.Client, error) {
	c, err := mongo.Connect(options.Client().ApplyURI(mongoURL).SetTimeout(5 * time.Minute))
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Ping(pctx, nil); err != nil {
		c.Disconnect(context.Background())
		return nil, fmt.Errorf("connect to MongoDB at %s (is mongo-java-server up? integration/services/mongo.sh up): %w", mongoURL, err)
	}
	return c, nil
}

// mongoDoc is document id: the relational row's values as BSON.
func mongoDoc(id int64) bson.D {
	a := id
	if a < 0 {
		a = -a
	}
	sum := md5.Sum([]byte(strconv.FormatInt(id, 10)))
	h := hex.EncodeToString(sum[:])
	amount, _ := bson.ParseDecimal128(fmt.Sprintf("%d.%02d", a%100000/100, a%100))
	return bson.D{
		{Key: "_id", Value: id},
		{Key: "customer_id", Value: int32(a % 10000)},
		{Key: "status", Value: []string{"new", "paid", "shipped", "delivered"}[a%4]},
		{Key: "amount", Value: amount},
		{Key: "created_at", Value: bson.NewDateTimeFromTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id) * time.Second))},
		{Key: "note", Value: strings.Repeat(h, 4)},
	}
}

// mongoInsert inserts the documents of ids lo..hi, a thousand a call.
func mongoInsert(ctx context.Context, coll *mongo.Collection, lo, hi int64) error {
	for start := lo; start <= hi; start += 1000 {
		var docs []any
		for id := start; id <= min(hi, start+999); id++ {
			docs = append(docs, mongoDoc(id))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			return fmt.Errorf("MongoDB insert of _id %d…: %w", start, err)
		}
	}
	return nil
}

// mongoFresh makes db's collection with the documents 1..rows (the backfill), or with the
// seed batch -1 when rows is 0 (the streaming scenario). db must be a name never used
// before (mongoName): on mongo-java-server a change stream resumed on a collection whose
// database was dropped earlier yields nothing but invalidate.
func (b *bench) mongoFresh(ctx context.Context, db string, rows int) error {
	if mongoFreshPort != "" {
		if err := b.mongoRestart(ctx); err != nil {
			return err
		}
	}
	c, err := mongoConnect(ctx)
	if err != nil {
		return err
	}
	defer c.Disconnect(context.Background())
	coll := c.Database(db).Collection("bench")
	if rows == 0 {
		return mongoInsert(ctx, coll, -seedRows, -1)
	}
	return mongoInsert(ctx, coll, 1, int64(rows))
}

// mongoName is a database name of this run only (see mongoFresh).
func mongoName(base, stamp string) string { return base + "_" + strings.ToLower(stamp) }

func dropMongoDB(db string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if c, err := mongoConnect(ctx); err == nil {
		c.Database(db).Drop(ctx)
		c.Disconnect(ctx)
	}
}

// mongoCommitBatches commits batches from..to-1 of the streaming scenario to db.bench.
func mongoCommitBatches(ctx context.Context, db string, from, to int) error {
	c, err := mongoConnect(ctx)
	if err != nil {
		return err
	}
	defer c.Disconnect(context.Background())
	coll := c.Database(db).Collection("bench")
	for b := int64(from); b < int64(to); b++ {
		if err := mongoInsert(ctx, coll, b*60, b*60+59); err != nil {
			return err
		}
		prev := (b - 1) * 60
		upd := bson.D{{Key: "$set", Value: bson.D{{Key: "status", Value: "updated"}, {Key: "note", Value: strings.Repeat("u", 128)}}},
			{Key: "$inc", Value: bson.D{{Key: "customer_id", Value: int32(1)}}}}
		r, err := coll.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: prev}, {Key: "$lte", Value: prev + 29}}}}, upd)
		if err != nil {
			return fmt.Errorf("MongoDB update of batch %d: %w", b, err)
		}
		d, err := coll.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: prev + 30}, {Key: "$lte", Value: prev + 39}}}})
		if err != nil {
			return fmt.Errorf("MongoDB delete of batch %d: %w", b, err)
		}
		if r.ModifiedCount != 30 || d.DeletedCount != 10 {
			return fmt.Errorf("MongoDB batch %d: %d updated and %d deleted, want 30 and 10", b, r.ModifiedCount, d.DeletedCount)
		}
	}
	return nil
}

// mongoProbe inserts a document {_id: "probe-<n>"} into db.bench every second until stop:
// events that move a change stream's resume point past the snapshot. The batches touch
// int64 _ids only.
func mongoProbe(ctx context.Context, db string, stop <-chan struct{}) {
	c, err := mongoConnect(ctx)
	if err != nil {
		return
	}
	defer c.Disconnect(context.Background())
	coll := c.Database(db).Collection("bench")
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
		coll.InsertOne(ctx, bson.D{{Key: "_id", Value: fmt.Sprintf("probe-%d", n)}})
	}
}

// mongoMark inserts a marker document into db.bench while a change stream watches it and
// returns the marker's resume token: a stream resumed after it reads what follows it.
func mongoMark(ctx context.Context, db string) (string, error) {
	c, err := mongoConnect(ctx)
	if err != nil {
		return "", err
	}
	defer c.Disconnect(context.Background())
	coll := c.Database(db).Collection("bench")
	cs, err := coll.Watch(ctx, mongo.Pipeline{})
	if err != nil {
		return "", err
	}
	defer cs.Close(context.Background())
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "marker"}}); err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if !cs.Next(wctx) {
		return "", fmt.Errorf("no change event for the marker: %v", cs.Err())
	}
	data, err := cs.Current.LookupErr("_id", "_data")
	if err != nil {
		return "", fmt.Errorf("the marker's event has no _id._data token: %s", cs.Current)
	}
	return data.StringValue(), nil
}

// mongoStreamCeiling commits BENCH_ROWS changes after a marker and times `bench mongo-read
// stream` over them.
func (b *bench) mongoStreamCeiling(ctx context.Context) (run, error) {
	r := run{System: sysStreamReader, Scenario: scStreamingMongoDB}
	db := mongoName("bench_csr", b.stamp)
	if !b.p.keep {
		defer dropMongoDB(db)
	}
	if err := b.mongoFresh(ctx, db, 0); err != nil {
		return r, err
	}
	token, err := mongoMark(ctx, db)
	if err != nil {
		return r, err
	}
	if err := mongoCommitBatches(ctx, db, 0, b.p.Rows/changesPerBatch); err != nil {
		return r, err
	}
	return r, b.mongoRead(ctx, &r, "stream", db, token)
}

// mongoFindCeiling fills a collection with BENCH_ROWS documents and times `bench
// mongo-read find` over them.
func (b *bench) mongoFindCeiling(ctx context.Context) (run, error) {
	r := run{System: sysFindReader, Scenario: scBackfillMongoDB}
	db := mongoName("bench_find", b.stamp)
	if !b.p.keep {
		defer dropMongoDB(db)
	}
	if err := b.mongoFresh(ctx, db, b.p.Rows); err != nil {
		return r, err
	}
	return r, b.mongoRead(ctx, &r, "find", db, "")
}

// mongoPagedCeiling fills a collection with BENCH_ROWS documents and times `bench
// mongo-read paged` over them: the reads a chunked snapshot makes, and nothing else.
func (b *bench) mongoPagedCeiling(ctx context.Context) (run, error) {
	r := run{System: sysPagedReader, Scenario: scBackfillMongoDB}
	db := mongoName("bench_paged", b.stamp)
	if !b.p.keep {
		defer dropMongoDB(db)
	}
	if err := b.mongoFresh(ctx, db, b.p.Rows); err != nil {
		return r, err
	}
	return r, b.mongoRead(ctx, &r, "paged", db, strconv.Itoa(mongoPage))
}

// mongoRead times `bench mongo-read <mode> <db> <rows> [token]`, which must have read
// exactly BENCH_ROWS documents or events: else it timed something else.
func (b *bench) mongoRead(ctx context.Context, r *run, mode, db, token string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, "mongo-read", mode, db, strconv.Itoa(b.p.Rows), token)
	cmd.Env = append(os.Environ(), "BENCH_MONGODB_URL="+mongoURL)
	out, err := timed(cmd, r, int64(b.p.Rows))
	if err != nil {
		return err
	}
	if got := lastLine(out); got != fmt.Sprintf("read %d", b.p.Rows) {
		return fmt.Errorf("mongo-read %s said %q, want \"read %d\"", mode, got, b.p.Rows)
	}
	return nil
}

// mongoReadMain is `bench mongo-read stream <db> <n> <token>` (n change events of db.bench
// after the resume token, fullDocument updateLookup), `bench mongo-read find <db> <n>`
// (every document of db.bench in _id order, which must be n) or `bench mongo-read paged
// <db> <n> <page>` (the same documents, page documents a find, each after the last _id of
// the one before). It prints "read <n>".
func mongoReadMain(args []string) error {
	if len(args) < 3 || (args[0] != "stream" && args[0] != "find" && args[0] != "paged") {
		return errors.New("usage: bench mongo-read stream <db> <n> <token> | find <db> <n> | paged <db> <n> <page>")
	}
	n, err := strconv.Atoi(args[2])
	if err != nil {
		return fmt.Errorf("mongo-read: n: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := mongo.Connect(options.Client().ApplyURI(mongoURL))
	if err != nil {
		return err
	}
	defer c.Disconnect(context.Background())
	coll := c.Database(args[1]).Collection("bench")
	read := 0
	switch args[0] {
	case "paged":
		page, err := strconv.Atoi(args[len(args)-1])
		if len(args) < 4 || err != nil || page < 1 {
			return errors.New("mongo-read paged: want a page size of at least 1")
		}
		if read, err = mongoPaged(ctx, coll, page); err != nil {
			return err
		}
	case "find":
		cur, err := coll.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return fmt.Errorf("mongo-read find: %w", err)
		}
		defer cur.Close(context.Background())
		for cur.Next(ctx) {
			read++
		}
		if err := cur.Err(); err != nil {
			return fmt.Errorf("mongo-read find after %d: %w", read, err)
		}
	default:
		if len(args) < 4 || args[3] == "" {
			return errors.New("mongo-read stream: no resume token")
		}
		cs, err := coll.Watch(ctx, mongo.Pipeline{}, options.ChangeStream().
			SetFullDocument(options.UpdateLookup).SetResumeAfter(bson.D{{Key: "_data", Value: args[3]}}))
		if err != nil {
			return fmt.Errorf("mongo-read stream: %w", err)
		}
		defer cs.Close(context.Background())
		for read < n && cs.Next(ctx) {
			read++
		}
		if err := cs.Err(); err != nil {
			return fmt.Errorf("mongo-read stream after %d: %w", read, err)
		}
	}
	fmt.Printf("read %d\n", read)
	return nil
}

// mongoPaged reads every document of coll in pages of page documents in _id order, each
// find after the last _id of the page before (the bench's _ids are all int64: no other
// BSON type follows them), and returns how many it read.
func mongoPaged(ctx context.Context, coll *mongo.Collection, page int) (int, error) {
	read := 0
	var last bson.RawValue
	for {
		filter := bson.D{}
		if read > 0 {
			filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: last}}}}
		}
		cur, err := coll.Find(ctx, filter, options.Find().SetSort(bson.D{{Key: "_id", Value: 1}}).
			SetLimit(int64(page)).SetBatchSize(int32(page)))
		if err != nil {
			return read, fmt.Errorf("mongo-read paged after %d: %w", read, err)
		}
		n := 0
		for cur.Next(ctx) {
			n++
			id := cur.Current.Lookup("_id")
			last = bson.RawValue{Type: id.Type, Value: slices.Clone(id.Value)}
		}
		err = cur.Err()
		cur.Close(context.Background())
		if err != nil {
			return read, fmt.Errorf("mongo-read paged after %d: %w", read, err)
		}
		read += n
		if n < page {
			return read, nil
		}
	}
}
