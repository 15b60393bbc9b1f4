package mysql

import (
	"context"
	"encoding/hex"
	"log/slog"
	"testing"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/source/sourcetest"
)

// The streamed hot path of this source without the network: the stream
// reads a table map and a rows event as it reads them from its binlog
// connection (streamer.event: the table map seen before read no further,
// the rows event's header and images read in place, rows.go;
// decodeBinlog), and the encoder writes its key and value, appended into
// buffers reused from one event to the next. allocs/op is the allocations
// per streamed event (the aim: at most 2 up to the producer).
// Run with
//
//	go test -run '^$' -bench DecodeEncode -benchmem ./pkg/source/mysql

// The events are a MariaDB 11 binlog (binlog_format ROW, checksums on) of
//
//	CREATE TABLE orders (id INT PRIMARY KEY, customer_id BIGINT NOT NULL, note TEXT,
//	  total DECIMAL(12,2) NOT NULL, created_at DATETIME(6) NOT NULL, paid BOOL NOT NULL,
//	  attrs JSON, status VARCHAR(32) NOT NULL, due DATE, thumb BLOB)
//	INSERT INTO orders VALUES (1000042, 9000000000077, 'please leave the parcel with the neighbour at number 12',
//	  1234.50, '2024-03-01 10:00:00.123456', true, '{"gift": true, "tags": ["red", "xl"], "weight": 2.75}',
//	  'shipped', '2024-03-08', x'89504e470d0a1a0a0000000d49484452')
//	UPDATE orders SET status = 'delivered', total = 1240.00 WHERE id = 1000042
//
// as the server sent them: the format description, the table map, the
// write and the update rows events.
const (
	benchFormatEvent = "39e50e6b0f01000000fc000000000000000000040031302e31312e31392d4d6172696144422d302b646562313275312d6c6f6700000000000000000000000000000000000000000000000013380d000800120004040404120000e400041a08000000080808020000000a0a0a0000000000000a0a0a0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000041304000d0808080a0a0a01131d7d0d"
	benchTableMap    = "12e70e6b1301000000a1000000b926b91e00008e030000000001001362656e63685f616c6c6f635f6361707475726500066f7264657273000a0308fcf61201fc0f0afc08020c020604800002440301010003042d2e2d3f04410269640b637573746f6d65725f6964046e6f746505746f74616c0a637265617465645f617404706169640561747472730673746174757303647565057468756d620801008b9640e3"
	benchWriteRows   = "12e70e6b1701000000ce0000008727b91e00008e030000000001000aff0300fc6a420f004d90cd792f0800003700706c65617365206c65617665207468652070617263656c207769746820746865206e65696768626f7572206174206e756d62657220313280000004d23299b2c2a00001e24001350000007b2267696674223a20747275652c202274616773223a205b22726564222c2022786c225d2c2022776569676874223a20322e37357d077368697070656468d00f100089504e470d0a1a0a0000000d49484452b07a7f35"
	benchUpdateRows  = "12e70e6b18010000007e010000502ab91e00008e030000000001000aff03ff0300fc6a420f004d90cd792f0800003700706c65617365206c65617665207468652070617263656c207769746820746865206e65696768626f7572206174206e756d62657220313280000004d23299b2c2a00001e24001350000007b2267696674223a20747275652c202274616773223a205b22726564222c2022786c225d2c2022776569676874223a20322e37357d077368697070656468d00f100089504e470d0a1a0a0000000d4948445200fc6a420f004d90cd792f0800003700706c65617365206c65617665207468652070617263656c207769746820746865206e65696768626f7572206174206e756d62657220313280000004d80099b2c2a00001e24001350000007b2267696674223a20747275652c202274616773223a205b22726564222c2022786c225d2c2022776569676874223a20322e37357d0964656c69766572656468d00f100089504e470d0a1a0a0000000d494844525a227c94"
)

func benchBytes(tb testing.TB, h string) []byte {
	raw, err := hex.DecodeString(h)
	if err != nil {
		tb.Fatal(err)
	}
	return raw
}

// benchStream is the streamer of the captured events' table, with the
// stream's parser (newParser), and an emit that encodes each event's key
// and value.
type benchStream struct {
	st         *streamer
	key, value []byte
	emitted    int
	tableMap   string // the table map of every statement
}

func newBenchStream(tb testing.TB) *benchStream {
	return newStreamOf(tb, benchFormatEvent, benchTableMap)
}

// newStreamOf is a benchStream of the table of tableMap, an event of the
// binlog that format (a format description event) starts.
func newStreamOf(tb testing.TB, format, tableMap string) *benchStream {
	src := &Source{flavor: flavorMariaDB, log: slog.Default()}
	var err error
	var tm *replication.TableMapEvent
	full := replication.NewBinlogParser() // the table's columns, from the table map with its names
	for _, h := range []string{format, tableMap} {
		ev, err := full.Parse(benchBytes(tb, h))
		if err != nil {
			tb.Fatal(err)
		}
		if m, ok := ev.Event.(*replication.TableMapEvent); ok {
			tm = m
		}
	}
	collations := map[uint64]string{8: "latin1", 33: "utf8mb3", 45: "utf8mb4", 46: "utf8mb4", 51: "cp1251", 63: "binary", 224: "utf8mb4"}
	tb2 := &table{db: string(tm.Schema), name: string(tm.Table), mariadb: true, key: []int{0}}
	tb2.cols = loggedColumns(tm, flavorMariaDB, collations)
	tb2.t = &change.Table{ID: change.TableID{DB: tb2.db, Name: tb2.name}, Key: tb2.key}
	for i := range tb2.cols {
		c := &tb2.cols[i]
		c.typ = columnType(c)
		tb2.dflts = append(tb2.dflts, nil)
		tb2.t.Columns = append(tb2.t.Columns, change.Column{Name: c.name, Type: c.typ, Optional: c.nullable})
	}
	src.tables, src.collations = map[string]*table{tb2.db + "." + tb2.name: tb2}, collations
	src.opts.TopicPrefix = "shop"
	src.opts.Config.Tables = []string{tb2.db + "." + tb2.name}
	if src.sel, err = src.opts.Config.Selection(); err != nil {
		tb.Fatal(err)
	}
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "shop"})
	bs := &benchStream{tableMap: tableMap}
	bs.st = &streamer{src: src, file: "mariadb-bin.000001", out: sourcetest.FuncStream(func(_ context.Context, ev *change.Event) error {
		var err error
		if bs.key, _, err = enc.AppendKey(bs.key[:0], ev); err != nil {
			return err
		}
		bs.value, err = enc.AppendValue(bs.value[:0], ev, 1_709_287_200_000_000)
		bs.emitted++
		return err
	}), parser: src.newParser(), inPlace: true}
	// The format description the stream sees first.
	if err := bs.handle(benchBytes(tb, format)); err != nil {
		tb.Fatal(err)
	}
	bs.st.tx = txState{gtid: "0-1-42", commitMicros: 1_709_287_200_000_000, open: true}
	return bs
}

// handle hands raw to the streamer as the stream does.
func (bs *benchStream) handle(raw []byte) error {
	return bs.st.event(context.Background(), raw)
}

// statement returns what streams one statement: its table map, then the
// rows event (whose end-of-statement flag makes go-mysql forget the map).
func (bs *benchStream) statement(tb testing.TB, rowsEvent string) func() {
	events := [][]byte{benchBytes(tb, bs.tableMap), benchBytes(tb, rowsEvent)}
	return func() {
		for _, raw := range events {
			if err := bs.handle(raw); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

func BenchmarkDecodeEncode(b *testing.B) {
	for _, bm := range []struct{ name, event string }{{"insert", benchWriteRows}, {"update", benchUpdateRows}} {
		b.Run(bm.name, func(b *testing.B) {
			bs := newBenchStream(b)
			step := bs.statement(b, bm.event)
			step()
			if bs.emitted != 1 {
				b.Fatalf("%d events from one row, want 1", bs.emitted)
			}
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
			b.SetBytes(int64(len(bs.key) + len(bs.value)))
		})
	}
}
