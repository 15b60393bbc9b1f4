package postgres_test

// A review check that held (passes on the reviewed code); it runs only
// with TRIBUTARY_REVIEW_HELD=1 (reviewHeld).
//
// The replica identity of partitioned tables: a
// partition without a replica identity attached to a captured partitioned
// table while the pipeline runs (no source.tables list). PostgreSQL then
// refuses UPDATE on that partition while the table is in the publication;
// the pipeline must take the table out of the publication (as it does for
// a table set to REPLICA IDENTITY NOTHING while streaming), so that the
// application's writes work again, and say so.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestReviewPGPartitionWithoutIdentityAttached(t *testing.T) {
	itest.ReviewHeld(t)
	e := itest.NewEnv(t, "rvattach")
	e.Exec(`CREATE TABLE m (id int, region text, v text, PRIMARY KEY (id, region)) PARTITION BY LIST (region)`)
	e.Exec(`CREATE TABLE m_eu PARTITION OF m FOR VALUES IN ('eu')`)
	e.Exec(`INSERT INTO m VALUES (1, 'eu', 'x')`)
	e.Exec(itest.SentinelTable)
	pub := "tributary_" + e.Name
	p := e.Start("run", "--config", e.WriteTablesConfig())
	e.PGCaughtUp(p, 1)
	// A partition with its own replica identity NOTHING (a partition
	// inherits the parent's primary key, so NOTHING is how it lacks one).
	e.Exec(`CREATE TABLE m_us (id int NOT NULL, region text NOT NULL, v text)`)
	e.Exec(`ALTER TABLE m_us REPLICA IDENTITY NOTHING`)
	e.Exec(`ALTER TABLE m ATTACH PARTITION m_us FOR VALUES IN ('us')`)
	e.Exec(`INSERT INTO m VALUES (2, 'us', 'y')`)
	var lastErr error
	ok := false
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !p.Exited() {
		if _, lastErr = e.Conn.Exec(context.Background(), `UPDATE m SET v = 'z' WHERE region = 'us'`); lastErr == nil {
			ok = true
			break
		}
		time.Sleep(time.Second)
	}
	_, tables := e.Published(pub)
	out := p.Out.String()
	if p.Exited() {
		t.Fatalf("exited; output:\n%s", out)
	}
	p.Stop(t)
	if !ok {
		t.Fatalf("30 s after a partition without a replica identity was attached, the application's UPDATE still fails (%v); publication lists %v; warned about m_us: %v",
			lastErr, tables, strings.Contains(out, "m_us"))
	}
	t.Logf("publication lists %v; warned about m_us: %v", tables, strings.Contains(out, "m_us"))
}
