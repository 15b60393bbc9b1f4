package main

// The source ceilings: how fast the source alone hands over the changes of the
// streaming scenarios, beside the producer ceiling (producer-perf-test, bench.go), so the
// report shows Tributary's streaming rate as a share of the lower of the two.
//
//   - pg_recvlogical drains a slot of its own over the same changes (pgoutput,
//     proto_version 1, the bench publication) to /dev/null.
//   - binlog-reader is this program re-executed as `bench binlog-read`: go-mysql's
//     BinlogSyncer (Tributary's binlog client, with its settings) reads the binlog over the
//     same changes, decoding every rows event and discarding it.
//
// Each is timed from its exec to its exit; its CPU comes from its rusage, its peak RSS from
// /proc (runPeak).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
	"github.com/jackc/pgx/v5"
)

const (
	sysRecvlogical  = "pg_recvlogical (source ceiling)"
	sysBinlogReader = "binlog-reader (source ceiling)"
)

// timed runs cmd to its end and fills r's rate, CPU and peak RSS for events.
func timed(cmd *exec.Cmd, r *run, events int64) ([]byte, error) {
	t0 := time.Now()
	out, peak, err := runPeak(cmd)
	secs := time.Since(t0).Seconds()
	if err != nil {
		return out, fmt.Errorf("%s: %w\n%s", cmd.Path, err, tailBytes(out))
	}
	r.Events = events
	r.EventsPerSec = float64(events) / secs
	r.PeakRSSMB = ptr(peak)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		r.CPUSecPerMillion = ptr(cpu / float64(events) * 1e6)
	}
	return out, nil
}

// recvlogical drains BENCH_ROWS changes, committed beforehand, from a slot with
// pg_recvlogical. The walsender (pgoutput decoding) runs in the server; its CPU over the
// drain is sampled every 50 ms and given in the note.
func (b *bench) recvlogical(ctx context.Context) (r run, err error) {
	r = run{System: sysRecvlogical, Scenario: scStreaming}
	db := "bench_recv_streaming"
	if !b.p.keep {
		defer dropDB(context.Background(), db)
	}
	if err := createDB(ctx, db, ""); err != nil {
		return r, err
	}
	if err := seed(ctx, db); err != nil {
		return r, err
	}
	if err := createSlot(ctx, db, "bench_pub", db); err != nil {
		return r, err
	}
	n := b.p.Rows / changesPerBatch
	if err := commitBatches(ctx, db, 0, n); err != nil {
		return r, err
	}
	c, err := connect(ctx, db)
	if err != nil {
		return r, err
	}
	defer c.Close(context.Background())
	var end string
	if err := c.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&end); err != nil {
		return r, err
	}
	// One batch past the end: pg_recvlogical stops at the first record after --endpos,
	// instead of waiting for a keepalive. It exits 0 only there (--no-loop: a lost
	// connection is an error), so status 0 means every change was decoded. (Its slot's
	// confirmed_flush_lsn says less: the cluster's other databases move the WAL's end past
	// the last change it confirms.)
	if err := commitBatches(ctx, db, n, n+1); err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, "pg_recvlogical", "--dbname", dbURL(db), "--slot", db, "--start",
		"--no-loop", "--endpos", end, "--option", "proto_version=1", "--option", "publication_names=bench_pub",
		"--file", "/dev/null")
	stop := make(chan struct{})
	walsender := make(chan float64, 1)
	go func() { walsender <- sampleWalsender(ctx, c, db, stop) }()
	_, err = timed(cmd, &r, int64(b.p.Rows))
	close(stop)
	ws := <-walsender
	if err != nil {
		return r, fmt.Errorf("pg_recvlogical (is the PostgreSQL client installed?): %w", err)
	}
	r.Note = fmt.Sprintf("walsender CPU %.1f s/M", ws/float64(r.Events)*1e6)
	return r, nil
}

// sampleWalsender reads the CPU seconds of the walsender holding slot every 50 ms until stop
// and returns the last reading (the walsender exits with pg_recvlogical).
func sampleWalsender(ctx context.Context, c *pgx.Conn, slot string, stop <-chan struct{}) float64 {
	pid, last := 0, 0.0
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if pid == 0 {
			var p *int32
			if c.QueryRow(ctx, "SELECT active_pid FROM pg_replication_slots WHERE slot_name = $1", slot).Scan(&p) == nil && p != nil {
				pid = int(*p)
			}
		}
		if pid != 0 {
			if cpu, err := cpuSeconds(pid); err == nil {
				last = cpu
			}
		}
		select {
		case <-stop:
			return last
		case <-tick.C:
		}
	}
}

// binlogReader commits BENCH_ROWS changes on MariaDB and times `bench binlog-read` over them.
func (b *bench) binlogReader(ctx context.Context) (r run, err error) {
	r = run{System: sysBinlogReader, Scenario: scStreamingMariaDB}
	db := "bench_binlog_streaming_mariadb"
	if !b.p.keep {
		defer dropMyDB(db)
	}
	if err := createMyStreamDB(db); err != nil {
		return r, err
	}
	start, err := myBinlogPos()
	if err != nil {
		return r, err
	}
	if err := myCommitBatches(db, 0, b.p.Rows/changesPerBatch); err != nil {
		return r, err
	}
	end, err := myBinlogPos()
	if err != nil {
		return r, err
	}
	self, err := os.Executable()
	if err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, self, "binlog-read", start.File, strconv.Itoa(int(start.Pos)), end.File, strconv.Itoa(int(end.Pos)), db)
	out, err := timed(cmd, &r, int64(b.p.Rows))
	if err != nil {
		return r, err
	}
	// What it decoded must be what was committed: else it timed something else.
	got, perr := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(lastLine(out), "rows ")), 10, 64)
	if perr != nil || got != int64(b.p.Rows) {
		return r, fmt.Errorf("binlog-read decoded %q rows of %s.bench, committed %d", lastLine(out), db, b.p.Rows)
	}
	return r, nil
}

func lastLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}

// binlogRead is `bench binlog-read <start file> <start pos> <end file> <end pos> <db>`: it
// prints "rows <n>", the rows of db.bench readBinlog decoded between start and end.
func binlogRead(args []string) error {
	if len(args) != 5 {
		return errors.New("usage: bench binlog-read <start file> <start pos> <end file> <end pos> <db>")
	}
	startPos, err1 := strconv.ParseUint(args[1], 10, 32)
	endPos, err2 := strconv.ParseUint(args[3], 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("binlog-read: positions: %w", err)
	}
	rows, err := readBinlog(binlogPos{File: args[0], Pos: uint32(startPos)}, binlogPos{File: args[2], Pos: uint32(endPos)}, args[4])
	if err != nil {
		return err
	}
	fmt.Printf("rows %d\n", rows)
	return nil
}

// readBinlog reads the binlog from start to end with Tributary's BinlogSyncer settings
// (pkg/source/mysql/stream.go), every rows event decoded and dropped, and returns the rows
// of db.bench it decoded.
func readBinlog(start, end binlogPos, db string) (int64, error) {
	syncer := newBinlogSyncer()
	defer syncer.Close()
	st, err := syncer.StartSync(mysql.Position{Name: start.File, Pos: start.Pos})
	if err != nil {
		return 0, fmt.Errorf("binlog-read: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	file := start.File
	var rows int64
	for {
		ev, err := st.GetEvent(ctx)
		if err != nil {
			return rows, fmt.Errorf("binlog-read in %s after %d rows: %w", file, rows, err)
		}
		switch e := ev.Event.(type) {
		case *replication.RotateEvent:
			// Its position is in the file it closes, not in the next one: compared
			// with end's, it ended a read whose end is in the next file there.
			file = string(e.NextLogName)
			continue
		case *replication.RowsEvent:
			if string(e.Table.Schema) == db && string(e.Table.Table) == "bench" {
				n := int64(len(e.Rows))
				switch ev.Header.EventType {
				case replication.UPDATE_ROWS_EVENTv0, replication.UPDATE_ROWS_EVENTv1, replication.UPDATE_ROWS_EVENTv2,
					replication.MARIADB_UPDATE_ROWS_COMPRESSED_EVENT_V1:
					n /= 2 // before and after image
				}
				rows += n
			}
		}
		if file == end.File && ev.Header.LogPos >= end.Pos {
			return rows, nil
		}
	}
}

// newBinlogSyncer is a BinlogSyncer of the bench's MariaDB with Tributary's settings.
func newBinlogSyncer() *replication.BinlogSyncer {
	host, port, _ := strings.Cut(mariaDBAddr, ":")
	p, _ := strconv.Atoi(port)
	return replication.NewBinlogSyncer(replication.BinlogSyncerConfig{
		ServerID: uint32(5_800_000 + rand.IntN(200_000)), Flavor: mysql.MariaDBFlavor,
		Host: host, Port: uint16(p), User: "root", Password: "root",
		Charset: "utf8mb4", TimestampStringLocation: time.UTC,
		DisableRetrySync: true, Logger: slog.New(slog.DiscardHandler),
		EventCacheCount: 256, // as Tributary's stream had it before it read the binlog itself (pkg/source/mysql/binlog.go)
	})
}
