package itest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func (e *Env) FaultPgURL() string { return "postgres://postgres:postgres@127.0.0.1:5442/" + e.DB }

// faultPgSQL runs sql on the fault server's database, connecting anew (the
// server may just have restarted).
func (e *Env) FaultPgSQL(sql string) {
	e.T.Helper()
	var conn *pgx.Conn
	var err error
	WaitFor(e.T, 60*time.Second, "a connection to the fault PostgreSQL", func() bool {
		conn, err = pgx.Connect(context.Background(), e.FaultPgURL())
		return err == nil
	})
	defer conn.Close(context.Background())
	if _, err := conn.Exec(context.Background(), sql); err != nil {
		e.T.Fatalf("%s: %v", sql, err)
	}
}

func (e *Env) FaultPgConfig(window string) string {
	cfg := fmt.Sprintf(`name: %s
source:
  type: postgres
  url: %s
  outage_window: %s
destination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  create_missing_topics: true
checkpoint:
  path: %s
`, e.Name, e.FaultPgURL(), window, KafkaAddr, e.Prefix, filepath.Join(e.Dir, "checkpoints"))
	path := filepath.Join(e.Dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// writePgFor commits random transactions (writer.tx) for d. It is never
// running while the server goes away, so no commit is in doubt.
func (w *Writer) WritePgFor(t *testing.T, url string, d time.Duration) {
	t.Helper()
	w.Run(context.Background(), t, url, d)
	if w.Err != nil {
		t.Fatal(w.Err)
	}
}
