package main

// The latency floor: what the source and the broker alone take under the latency scenarios'
// load, beside Tributary's latency in the same report. `bench latency-floor` (this program
// re-executed) reads the changes as Tributary's sources do (a pgoutput slot; MariaDB's binlog
// from where it ended at the start) and produces each row change as soon as it is read, a
// record that holds only what the latency is measured by (op, id, the commit time), acks=all,
// idempotent; the records of a source transaction wait for its end and then go at once, in
// one produce request per partition where they fit (a long linger, ended at each source
// transaction's end, as Tributary's hurry ends it: pkg/pipeline/hurry.go). The harness
// measures its records as it measures Tributary's (commitLatencies), so the floor's p50 and
// p99 are what the source and the broker take on this machine under this load, without
// decoding, encoding or checkpoints: Tributary's minus the floor's is what it adds.
//
// At least once only: exactly once adds the commit (flush, EndTxn, the markers) at a pause,
// which is Tributary's own design (docs/exactly-once.md); a floor committing each source
// transaction on its own falls behind at 100 transactions a second on this machine.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/twmb/franz-go/pkg/kgo"
)

const sysFloor = "latency floor"

// floor is the publisher of the latency floor.
type floor struct{}

func (f floor) readyStream(ctx context.Context, w world) error {
	if w.source == srcMariaDB {
		return nil // it reads from where the binlog ends when it starts (probe, bench.go)
	}
	return createSlot(ctx, w.db, "bench_pub", w.slot)
}

func (f floor) start(_ context.Context, w world) (*child, time.Time, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, time.Time{}, err
	}
	from := w.slot
	if w.source == srcMariaDB {
		pos, err := myBinlogPos()
		if err != nil {
			return nil, time.Time{}, err
		}
		from = pos.File + ":" + strconv.Itoa(int(pos.Pos))
	}
	t0 := time.Now()
	cmd := exec.Command(self, "latency-floor", w.source, w.db, from, w.topic)
	c, err := startChild(cmd, filepath.Join(w.dir, "run.log"))
	return c, t0, err
}

// latencyFloorMain is `bench latency-floor <postgres|mariadb> <db> <slot | binlog file:pos>
// <topic>`: it publishes until SIGTERM.
func latencyFloorMain(args []string) error {
	if len(args) != 4 {
		return errors.New("usage: bench latency-floor <postgres|mariadb> <db> <slot | file:pos> <topic>")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkaAddr), kgo.DefaultProduceTopic(args[3]), kgo.ProducerLinger(time.Minute))
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	p := &floorProducer{cl: cl}
	if args[0] == srcMariaDB {
		err = p.binlog(ctx, args[1], args[2])
	} else {
		err = p.slot(ctx, args[1], args[2])
	}
	if ctx.Err() != nil {
		return p.cl.Flush(context.Background()) // SIGTERM: the run is over
	}
	return err
}

// floorProducer produces the floor's records, a source transaction's at its end.
type floorProducer struct {
	cl *kgo.Client

	mu  sync.Mutex
	bad error // the first record that failed
}

func (p *floorProducer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bad
}

func (p *floorProducer) row(ctx context.Context, op string, id int64, commit string) error {
	if err := p.failed(); err != nil {
		return err
	}
	side := "after"
	if op == "d" {
		side = "before"
	}
	v := fmt.Sprintf(`{"payload":{"op":%q,%q:{"id":%d},"source":{%s}}}`, op, side, id, commit)
	p.cl.Produce(ctx, &kgo.Record{Key: strconv.AppendInt(nil, id, 10), Value: []byte(v)}, func(_ *kgo.Record, err error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if err != nil && p.bad == nil {
			p.bad = err
		}
	})
	return nil
}

// end ends a source transaction: its records go now, without waiting for the linger (a
// flush whose context is already done only ends the linger; see kafka.Producer.Hurry).
func (p *floorProducer) end() error {
	done, cancel := context.WithCancel(context.Background())
	cancel()
	_ = p.cl.Flush(done)
	return p.failed()
}

// slot streams db's slot with pgoutput (proto_version 1, the bench publication).
func (p *floorProducer) slot(ctx context.Context, db, slot string) error {
	conn, err := pgconn.Connect(ctx, dbURL(db)+"?replication=database")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if err := pglogrepl.StartReplication(ctx, conn, slot, 0, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names 'bench_pub'"}}); err != nil {
		return err
	}
	var received pglogrepl.LSN
	var commit string
	status := time.Now()
	for {
		if time.Since(status) > 5*time.Second {
			if err := pglogrepl.SendStandbyStatusUpdate(ctx, conn, pglogrepl.StandbyStatusUpdate{WALWritePosition: received}); err != nil {
				return err
			}
			status = time.Now()
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msg, err := conn.ReceiveMessage(rctx)
		cancel()
		if pgconn.Timeout(err) && ctx.Err() == nil {
			continue
		}
		if err != nil {
			return err
		}
		cd, ok := msg.(*pgproto3.CopyData)
		if !ok || len(cd.Data) == 0 {
			continue
		}
		switch cd.Data[0] {
		case pglogrepl.PrimaryKeepaliveMessageByteID:
			ka, err := pglogrepl.ParsePrimaryKeepaliveMessage(cd.Data[1:])
			if err != nil {
				return err
			}
			if ka.ReplyRequested {
				status = time.Time{}
			}
		case pglogrepl.XLogDataByteID:
			xld, err := pglogrepl.ParseXLogData(cd.Data[1:])
			if err != nil {
				return err
			}
			received = xld.WALStart + pglogrepl.LSN(len(xld.WALData))
			m, err := pglogrepl.Parse(xld.WALData)
			if err != nil {
				return err
			}
			switch m := m.(type) {
			case *pglogrepl.BeginMessage:
				commit = fmt.Sprintf(`"ts_us":%d`, m.CommitTime.UnixMicro())
			case *pglogrepl.InsertMessage:
				err = p.row(ctx, "c", tupleID(m.Tuple), commit)
			case *pglogrepl.UpdateMessage:
				err = p.row(ctx, "u", tupleID(m.NewTuple), commit)
			case *pglogrepl.DeleteMessage:
				err = p.row(ctx, "d", tupleID(m.OldTuple), commit)
			case *pglogrepl.CommitMessage:
				err = p.end()
			}
			if err != nil {
				return err
			}
		}
	}
}

// tupleID is the bench table's first column, id, of a pgoutput tuple (text format).
func tupleID(t *pglogrepl.TupleData) int64 {
	if t == nil || len(t.Columns) == 0 {
		return 0
	}
	id, _ := strconv.ParseInt(string(t.Columns[0].Data), 10, 64)
	return id
}

// binlog streams MariaDB's binlog from "file:pos" with Tributary's BinlogSyncer settings
// (newBinlogSyncer, source.go), the rows of db.bench.
func (p *floorProducer) binlog(ctx context.Context, db, from string) error {
	file, posText, _ := strings.Cut(from, ":")
	pos, err := strconv.ParseUint(posText, 10, 32)
	if err != nil {
		return fmt.Errorf("latency-floor: binlog position %q: %w", from, err)
	}
	syncer := newBinlogSyncer()
	defer syncer.Close()
	st, err := syncer.StartSync(mysql.Position{Name: file, Pos: uint32(pos)})
	if err != nil {
		return err
	}
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return err
		}
		switch e := ev.Event.(type) {
		case *replication.RowsEvent:
			if string(e.Table.Schema) != db || string(e.Table.Table) != "bench" {
				continue
			}
			commit := fmt.Sprintf(`"ts_ms":%d`, int64(ev.Header.Timestamp)*1000)
			op, step, at := "c", 1, 0
			switch ev.Header.EventType {
			case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
				replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
				op, step, at = "u", 2, 1 // before and after image: the after's id
			case replication.DELETE_ROWS_EVENTv0, replication.DELETE_ROWS_EVENTv1, replication.DELETE_ROWS_EVENTv2,
				replication.MARIADB_DELETE_ROWS_COMPRESSED_EVENT_V1:
				op = "d"
			}
			for i := at; i < len(e.Rows); i += step {
				id, _ := e.Rows[i][0].(int64)
				if err := p.row(ctx, op, id, commit); err != nil {
					return err
				}
			}
		case *replication.XIDEvent:
			if err := p.end(); err != nil {
				return err
			}
		}
	}
}
