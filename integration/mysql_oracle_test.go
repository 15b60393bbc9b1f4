package integration

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// TestMySQLNoGapsAcrossKills is the no-gap oracle (TestNoGapsAcrossKills)
// for the MySQL source on MariaDB: a writer commits and rolls back
// transactions of inserts, updates and deletes while the pipeline is
// SIGKILLed at random moments and restarted; the topic must then hold every
// committed change, no rolled-back value, and per key the first
// occurrences of seq in increasing order.
func TestMySQLNoGapsAcrossKills(t *testing.T) {
	e := newMyEnv(t, "myoracle")
	e.exec(`CREATE TABLE ledger (k INT PRIMARY KEY, seq BIGINT NOT NULL, pad VARCHAR(200))`)
	e.exec(`INSERT INTO ledger SELECT seq, seq, REPEAT('x', 100) FROM seq_1_to_500`)
	cfg := e.writeConfig("")
	topic := e.prefix + "." + e.db + ".ledger"

	start := func() *proc { return e.start("run", "--config", cfg) }
	runOracle(t, "mysql oracle", topic, 500, 20*time.Second, start, func(ctx context.Context, w *writer) {
		w.runMySQL(ctx, e.db, 20*time.Second)
	})
}

func (w *writer) runMySQL(ctx context.Context, db string, d time.Duration) {
	conn, err := client.Connect(mariadbAddr, "root", "root", db)
	if err != nil {
		w.err = err
		return
	}
	defer conn.Close()
	rng := rand.New(rand.NewPCG(42, uint64(time.Now().UnixNano())))
	end := time.Now().Add(d)
	for time.Now().Before(end) && ctx.Err() == nil {
		if err := w.txMySQL(conn, rng); err != nil {
			w.err = fmt.Errorf("writer: %w", err)
			return
		}
		time.Sleep(time.Duration(rng.IntN(4)) * time.Millisecond)
	}
}

// txMySQL is writer.tx for MySQL: 1-5 changes, one transaction in ten
// rolled back.
func (w *writer) txMySQL(conn *client.Conn, rng *rand.Rand) error {
	if err := conn.Begin(); err != nil {
		return err
	}
	rollback := rng.IntN(10) == 0
	live := map[int64]int64{}
	w.mu.Lock()
	for k, s := range w.live {
		live[k] = s
	}
	nextKey, seq := w.nextKey, w.seq
	w.mu.Unlock()
	var changes []change3
	for n := 1 + rng.IntN(5); n > 0; n-- {
		seq++
		var k int64
		var q string
		switch r := rng.IntN(10); {
		case r < 5 || len(live) < 50:
			k = nextKey
			nextKey++
			q = fmt.Sprintf("INSERT INTO ledger VALUES (%d, %d, 'w')", k, seq)
			changes = append(changes, change3{"c", k, seq})
			live[k] = seq
		case r < 8:
			k = anyKey(live, rng)
			q = fmt.Sprintf("UPDATE ledger SET seq = %d WHERE k = %d", seq, k)
			changes = append(changes, change3{"u", k, seq})
			live[k] = seq
		default:
			k = anyKey(live, rng)
			q = fmt.Sprintf("DELETE FROM ledger WHERE k = %d", k)
			changes = append(changes, change3{"d", k, live[k]})
			delete(live, k)
		}
		if _, err := conn.Execute(q); err != nil {
			conn.Rollback()
			return err
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if rollback {
		for _, c := range changes {
			if c.op != "d" {
				w.rolledBack[c.seq] = true
			}
		}
		w.seq = seq
		return conn.Rollback()
	}
	if err := conn.Commit(); err != nil {
		return err
	}
	w.live, w.nextKey, w.seq = live, nextKey, seq
	w.log = append(w.log, changes...)
	return nil
}
