package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The benchmark table: about 200 bytes a row (a 128-character note and five small columns),
// every value a function of the id, so each system reads the same bytes.
//
// Changes come in batches of 100, one transaction each: batch b inserts ids 60b..60b+59,
// updates 30 rows of batch b-1 and deletes 10 others of it (60/30/10). Batch -1 is the seed
// that every streaming database starts with, so batch 0 has rows to update and delete.
const schemaSQL = `
CREATE TABLE bench (
  id          bigint PRIMARY KEY,
  customer_id integer NOT NULL,
  status      text NOT NULL,
  amount      numeric(12,2) NOT NULL,
  created_at  timestamptz NOT NULL,
  note        text
);
CREATE FUNCTION bench_rows(lo bigint, hi bigint) RETURNS void LANGUAGE sql AS $$
  INSERT INTO bench
  SELECT g, (abs(g) % 10000)::int, (ARRAY['new','paid','shipped','delivered'])[1 + abs(g) % 4],
         (abs(g) % 100000) / 100.0, timestamptz '2024-01-01 00:00:00+00' + g * interval '1 second',
         repeat(md5(g::text), 4)
  FROM generate_series(lo, hi) g
$$;
CREATE FUNCTION bench_batch(b bigint) RETURNS void LANGUAGE sql AS $$
  SELECT bench_rows(b * 60, b * 60 + 59);
  UPDATE bench SET status = 'updated', amount = amount + 1, note = repeat(md5((id + 1)::text), 4)
   WHERE id BETWEEN (b - 1) * 60 AND (b - 1) * 60 + 29;
  DELETE FROM bench WHERE id BETWEEN (b - 1) * 60 + 30 AND (b - 1) * 60 + 39;
$$;
`

const (
	changesPerBatch = 100
	seedRows        = 60 // batch -1
)

func dbURL(db string) string { return "postgres://postgres:postgres@127.0.0.1:5432/" + db }

func connect(ctx context.Context, db string) (*pgx.Conn, error) {
	c, err := pgx.Connect(ctx, dbURL(db))
	if err != nil {
		return nil, fmt.Errorf("connect to %s (is `make services-up` done?): %w", db, err)
	}
	return c, nil
}

// adminExec runs statements on the postgres database.
func adminExec(ctx context.Context, sql ...string) error {
	c, err := connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	for _, s := range sql {
		if _, err := c.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// dropDB drops db and every replication slot in it; a slot still held by a walsender that
// is going away is retried for a while.
func dropDB(ctx context.Context, db string) error {
	c, err := connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err = c.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, db)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("drop slots of %s: %w", db, err)
	}
	_, err = c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)")
	return err
}

// createDB makes an empty database with the benchmark table, from template when it is set.
func createDB(ctx context.Context, db, template string) error {
	if err := dropDB(ctx, db); err != nil {
		return err
	}
	stmt := "CREATE DATABASE " + pgx.Identifier{db}.Sanitize()
	if template != "" {
		return adminExec(ctx, stmt+" TEMPLATE "+pgx.Identifier{template}.Sanitize())
	}
	if err := adminExec(ctx, stmt); err != nil {
		return err
	}
	return execIn(ctx, db, schemaSQL)
}

// execIn runs sql (one or more statements, no parameters) in db with the simple protocol, so
// that a DO block may COMMIT. Commits are asynchronous: only the load is measured, not fsync.
func execIn(ctx context.Context, db, sql string) error {
	c, err := connect(ctx, db)
	if err != nil {
		return err
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "SET synchronous_commit = off", pgx.QueryExecModeSimpleProtocol); err != nil {
		return err
	}
	if _, err := c.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("in %s: %w", db, err)
	}
	return nil
}

// fillRows inserts ids 1..n in one transaction.
func fillRows(ctx context.Context, db string, n int) error {
	if err := execIn(ctx, db, fmt.Sprintf("SELECT bench_rows(1, %d)", n)); err != nil {
		return err
	}
	return execIn(ctx, db, "VACUUM ANALYZE bench")
}

// seed inserts batch -1.
func seed(ctx context.Context, db string) error {
	return execIn(ctx, db, fmt.Sprintf("SELECT bench_rows(%d, -1)", -seedRows))
}

// commitBatches commits batches from..to-1, one transaction each.
func commitBatches(ctx context.Context, db string, from, to int) error {
	return execIn(ctx, db, fmt.Sprintf(
		"DO $$ BEGIN FOR b IN %d..%d LOOP PERFORM bench_batch(b); COMMIT; END LOOP; END $$", from, to-1))
}

// commitOneTransaction commits batches from..to-1 in one transaction.
func commitOneTransaction(ctx context.Context, db string, from, to int) error {
	return execIn(ctx, db, fmt.Sprintf(
		"DO $$ BEGIN FOR b IN %d..%d LOOP PERFORM bench_batch(b); END LOOP; END $$", from, to-1))
}

// largePerTx is the inserts per transaction of the large scenarios.
const largePerTx = 10

// largeIDs is where the large scenarios' ids start, clear of the seed's.
const largeIDs = 1_000_000

// commitLarge inserts rows rows whose note is size bytes of text (hexadecimal digests, each
// different: about as compressible as random text, so LZ4 does not make the rows small),
// largePerTx a transaction
// (readyStreamDB stored the note out of line, uncompressed, as TOAST stores text that does
// not compress, so the walsender reads rows of that size from the TOAST table).
func commitLarge(ctx context.Context, db string, rows, size int) error {
	return execIn(ctx, db, fmt.Sprintf(`DO $$ BEGIN FOR t IN 0..%d LOOP
  INSERT INTO bench SELECT g, (g %% 10000)::int, 'new', (g %% 100000) / 100.0, timestamptz '2024-01-01 00:00:00+00',
      (SELECT string_agg(md5(g || '.' || i), '') FROM generate_series(1, %d) i)
    FROM generate_series(%d + t * %d, %d + t * %d + %d) g;
  COMMIT;
END LOOP; END $$`, rows/largePerTx-1, size/32, largeIDs, largePerTx, largeIDs, largePerTx, largePerTx-1))
}

// createSlot makes a publication of the table and a pgoutput slot, for a publisher that
// starts streaming from the slot (Debezium with snapshot.mode=no_data).
func createSlot(ctx context.Context, db, pub, slot string) error {
	if err := execIn(ctx, db, "CREATE PUBLICATION "+pgx.Identifier{pub}.Sanitize()+" FOR TABLE bench"); err != nil {
		return err
	}
	return execIn(ctx, db, fmt.Sprintf("SELECT pg_create_logical_replication_slot('%s', 'pgoutput')", slot))
}

// slotActive reports whether a walsender holds slot.
func slotActive(ctx context.Context, slot string) (bool, error) {
	c, err := connect(ctx, "postgres")
	if err != nil {
		return false, err
	}
	defer c.Close(context.Background())
	var active bool
	err = c.QueryRow(ctx, `SELECT active FROM pg_replication_slots WHERE slot_name = $1`, slot).Scan(&active)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return active, err
}

// loader commits one batch every 100/rate seconds for d on db, on a fixed schedule (a late
// batch is sent at once, not skipped), starting at batch first. It returns when each batch's
// commit returned (commits[i] is batch first+i's) and how long the load took.
func loader(ctx context.Context, db string, rate int, d time.Duration, first int) ([]time.Time, time.Duration, error) {
	c, err := connect(ctx, db)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close(context.Background())
	// Commits are synchronous here: a walsender only sends WAL that is flushed, and an
	// asynchronous commit may wait for the WAL writer (wal_writer_delay, 200 ms).
	return schedule(ctx, rate, d, first, func(b int) error {
		_, err := c.Exec(ctx, "SELECT bench_batch($1)", b)
		return err
	})
}

// schedule calls commit(first), commit(first+1), ... one every 100/rate seconds for d, a
// late one at once, and returns when each call returned.
func schedule(ctx context.Context, rate int, d time.Duration, first int, commit func(batch int) error) ([]time.Time, time.Duration, error) {
	every := time.Second * changesPerBatch / time.Duration(rate)
	total := int(d / every)
	commits := make([]time.Time, 0, total)
	start := time.Now()
	for i := 0; i < total; i++ {
		if wait := time.Until(start.Add(time.Duration(i) * every)); wait > 0 {
			select {
			case <-ctx.Done():
				return commits, time.Since(start), ctx.Err()
			case <-time.After(wait):
			}
		}
		if err := commit(first + i); err != nil {
			return commits, time.Since(start), fmt.Errorf("batch %d: %w", first+i, err)
		}
		commits = append(commits, time.Now())
	}
	return commits, time.Since(start), nil
}
