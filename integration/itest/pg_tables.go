package itest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// WriteTablesConfig writes a file-store pipeline config whose
// source.tables is tables (none: every table with a primary key).
func (e *Env) WriteTablesConfig(tables ...string) string {
	list := ""
	if len(tables) > 0 {
		list = "  tables: [" + strings.Join(tables, ", ") + "]\n"
	}
	return e.WritePipeline(PipelineConfig{Source: list})
}

// PGCaughtUp commits row id into the sentinel table (which must be
// captured) and waits until p published it: everything committed before
// is then handed to the producer, and a SIGTERM delivers it.
func (e *Env) PGCaughtUp(p *Proc, id int) {
	e.T.Helper()
	e.Exec(`INSERT INTO sentinel VALUES ($1)`, id)
	topic := e.Prefix + ".public.sentinel"
	p.WaitFor(e.T, 120*time.Second, fmt.Sprintf("sentinel row %d", id), func() bool {
		for _, m := range ReadTopicIfAny(e.T, topic) {
			if after, ok := m.Payload()["after"].(map[string]any); ok && after["id"] == float64(id) {
				return true
			}
		}
		return false
	})
}

func ReadTopicIfAny(t *testing.T, topic string) []Message {
	if TopicEnd(topic) == 0 {
		return nil
	}
	return ReadTopic(t, topic)
}

// Published returns the tables publication pub lists, as schema.table.
func (e *Env) Published(pub string) (all bool, tables []string) {
	e.T.Helper()
	ctx := context.Background()
	if err := e.Conn.QueryRow(ctx, `SELECT puballtables FROM pg_publication WHERE pubname = $1`, pub).Scan(&all); err != nil {
		e.T.Fatalf("publication %s: %v", pub, err)
	}
	rows, err := e.Conn.Query(ctx, `SELECT schemaname || '.' || tablename FROM pg_publication_tables WHERE pubname = $1 ORDER BY 1`, pub)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		tables = append(tables, s)
	}
	return all, tables
}

// FinalState is the state a consumer keyed on k ends with after reading
// topic: the last message per key, a delete (or tombstone) removing it.
func FinalState(t *testing.T, topic string) map[int]string {
	out := map[int]string{}
	for _, m := range ReadTopicIfAny(t, topic) {
		k := int(m.Key["payload"].(map[string]any)["k"].(float64))
		if m.Value == nil || m.Payload()["op"] == "d" {
			delete(out, k)
			continue
		}
		out[k] = fmt.Sprint(m.Payload()["after"].(map[string]any)["v"])
	}
	return out
}

// DBState reads table (k int, v text) from the database.
func (e *Env) DBState(table string) map[int]string {
	e.T.Helper()
	rows, err := e.Conn.Query(context.Background(), `SELECT k, v FROM `+table)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var k int
		var v string
		rows.Scan(&k, &v)
		out[k] = v
	}
	return out
}
