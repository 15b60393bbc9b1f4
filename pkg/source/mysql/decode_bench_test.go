package mysql

import (
	"context"
	"encoding/hex"
	"log/slog"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// The streamed hot path of this source without the network: go-mysql
// parses a rows event (as the stream's syncer does: UseDecimal, no
// ParseTime, timestamps in UTC), handle turns it into an event (decodeRow,
// decodeBinlog) and the encoder writes its key and value, appended into
// buffers reused from one event to the next. allocs/op is the allocations
// per streamed event, go-mysql's parse included (issue 30 asks for at most
// 2). Run with
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

func benchBytes(b *testing.B, h string) []byte {
	raw, err := hex.DecodeString(h)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func BenchmarkDecodeEncode(b *testing.B) {
	for _, bm := range []struct{ name, event string }{{"insert", benchWriteRows}, {"update", benchUpdateRows}} {
		b.Run(bm.name, func(b *testing.B) {
			p := replication.NewBinlogParser()
			p.SetUseDecimal(true)
			p.SetParseTime(false)
			p.SetTimestampStringLocation(time.UTC)
			var tm *replication.TableMapEvent
			for _, h := range []string{benchFormatEvent, benchTableMap} {
				ev, err := p.Parse(benchBytes(b, h))
				if err != nil {
					b.Fatal(err)
				}
				if m, ok := ev.Event.(*replication.TableMapEvent); ok {
					tm = m
				}
			}
			collations := map[uint64]string{8: "latin1", 33: "utf8mb3", 45: "utf8mb4", 46: "utf8mb4", 63: "binary", 224: "utf8mb4"}
			tb := &table{db: string(tm.Schema), name: string(tm.Table), mariadb: true, key: []int{0}}
			tb.cols = loggedColumns(tm, flavorMariaDB, collations)
			tb.t = &change.Table{ID: change.TableID{DB: tb.db, Name: tb.name}, Key: tb.key}
			for i := range tb.cols {
				c := &tb.cols[i]
				c.typ = columnType(c)
				tb.dflts = append(tb.dflts, nil)
				tb.t.Columns = append(tb.t.Columns, change.Column{Name: c.name, Type: c.typ, Optional: c.nullable})
			}
			src := &Source{flavor: flavorMariaDB, tables: map[string]*table{tb.db + "." + tb.name: tb}, log: slog.Default(), collations: collations}
			src.opts.TopicPrefix = "shop"
			src.opts.Config.Tables = []string{tb.db + "." + tb.name}
			var err error
			if src.sel, err = src.opts.Config.Selection(); err != nil {
				b.Fatal(err)
			}
			enc := debezium.NewEncoder(debezium.Options{TopicPrefix: "shop"})
			var key, value []byte
			emitted := 0
			st := &streamer{src: src, file: "mariadb-bin.000001", emit: func(_ context.Context, ev *change.Event) error {
				var err error
				if key, _, err = enc.AppendKey(key[:0], ev); err != nil {
					return err
				}
				value, err = enc.AppendValue(value[:0], ev, 1_709_287_200_000_000)
				emitted++
				return err
			}}
			st.tx = txState{gtid: "0-1-42", commitMicros: 1_709_287_200_000_000, open: true}
			// A statement's rows event comes after its table map, which the
			// rows event's end-of-statement flag makes go-mysql forget.
			events := [][]byte{benchBytes(b, benchTableMap), benchBytes(b, bm.event)}
			ctx := context.Background()
			step := func() {
				for _, raw := range events {
					ev, err := p.Parse(raw)
					if err != nil {
						b.Fatal(err)
					}
					if err := st.handle(ctx, ev); err != nil {
						b.Fatal(err)
					}
				}
			}
			step()
			if emitted != 1 {
				b.Fatalf("%d events from one row, want 1", emitted)
			}
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
			b.SetBytes(int64(len(key) + len(value)))
		})
	}
}
