package scenario_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The dropstopped shape of TestRandomOracle: a table
// changed, dropped and created again under the same name while the
// publisher is down. The WAL or binlog still holds the changes of the
// dropped table, which must be published (docs/postgresql.md "Tables
// dropped while their changes are in the slot"), and the new table's rows
// too, by its backfill or the stream.

// dropTable is the dropstopped table. The writer never changes it (pick):
// it changes only while the publisher is down, so the backfill of each new
// table reads the rows the model says.
const dropTable = "tdrop"

// dropWhileDown runs, with the publisher down (w.mu held): two
// transactions on the drop table (inserts, updates, deletes, key updates
// as the writer makes them), DROP TABLE, CREATE TABLE with the same name
// and columns, and new rows in it. The old table's keys are gone from the
// database as after a TRUNCATE (truncSeq): nothing is published for a
// DROP, as Debezium publishes nothing.
func (w *workload) dropWhileDown() error {
	t := dropTable
	outside, err := outsidePublication(w.b, t)
	if err != nil {
		return err
	}
	from := len(w.log)
	for range 2 {
		if err := w.txIn(t, true); err != nil {
			return err
		}
	}
	for i := from; i < len(w.log) && outside; i++ {
		w.log[i].outside = true
	}
	if err := w.b.Exec("DROP TABLE " + t); err != nil {
		return err
	}
	create := w.b.CreateTable(t)
	if cs := w.charset[t]; cs != "" {
		create = append(create, w.b.CharsetColumns(t, cs, enumMembers, setMembers)...)
	}
	for _, q := range create {
		if err := w.b.Exec(q); err != nil {
			return fmt.Errorf("%s: %v", q, err)
		}
	}
	w.drops++
	w.truncSeq[t] = w.seq
	w.live[t] = map[int64]int64{}
	var cols string
	var vals []string
	for range 5 + w.rng.IntN(20) {
		w.seq++
		k, seq := w.nextKey, w.seq
		w.nextKey++
		x := w.text(t, seq)
		c, v := w.insertValues(t, k, seq, x, "")
		cols, vals = c, append(vals, "("+v+")")
		w.vOf[seq] = x
		w.live[t][k] = seq
		w.log = append(w.log, ochange{table: t, op: "c", k: k, seq: seq, recreated: true, gen: w.drops})
	}
	return w.b.Exec(fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t, cols, strings.Join(vals, ", ")))
}

// lostWithTable tells whether c, missing from every topic, is a row the
// PostgreSQL publication could never carry: inserted into a table created
// again while the publisher was down (before that table joined the
// publication, so pgoutput never sends it), whose only way to Kafka is the
// table's backfill, and that table dropped again at a later stop. When no
// publisher ran that backfill in between (a start killed before it), the
// row is gone (docs/postgresql.md "Tables created while stopped").
// MariaDB's binlog has such rows: there they are gaps.
//
// The same holds for the changes made to such a table at that later stop,
// before the drop (outside): no publisher added it to the publication, so
// pgoutput never decodes them either (Debezium with a filtered publication
// neither). Changes made while it was in the publication are in the WAL
// for it and are gaps when missing, even if no checkpoint recorded the
// table as captured (a start killed after its ALTER PUBLICATION and before
// its first checkpoint: pkg/source/postgres capturedset.go follows).
func lostWithTable(w *workload, c ochange) bool {
	return (c.recreated && c.gen < w.drops || c.outside) && w.b.Kind() == "postgres"
}

// outsidePublication tells whether PostgreSQL's table is in no publication
// now: the publishers since it was created again were all killed before
// the start that adds it to the publication got that far.
func outsidePublication(b itest.Backend, table string) (bool, error) {
	pg, ok := b.(*itest.PGBackend)
	if !ok {
		return false, nil
	}
	pg.Mu.Lock()
	defer pg.Mu.Unlock()
	var in bool
	err := pg.E.Conn.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_publication_rel WHERE prrelid = $1::text::regclass)`, table).Scan(&in)
	return !in, err
}

// dropSummary is the dropstopped part of the oracle's report line.
func dropSummary(w *workload) string {
	if !w.f.on("dropstopped") {
		return ""
	}
	return fmt.Sprintf(" | %s dropped and created again %d times while stopped (%d rows lost with a table dropped before its backfill, %d changes written while it was in no publication)", dropTable, w.drops, w.lostWithTable, w.lostOutside)
}
