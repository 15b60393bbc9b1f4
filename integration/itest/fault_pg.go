package itest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func (e *Env) FaultPgURL() string { return "postgres://postgres:postgres@127.0.0.1:5442/" + e.DB }

// FaultPgSQL runs sql on the fault server's database, connecting anew (the
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

// FaultPgConfig writes the pipeline's config, on the private PostgreSQL,
// with the given outage window.
func (e *Env) FaultPgConfig(window string) string {
	return e.WritePipeline(PipelineConfig{Typ: "postgres", URL: e.FaultPgURL(), Source: "  outage_window: " + window + "\n"})
}

// WritePgFor commits random transactions (writer.tx) for d. It is never
// running while the server goes away, so no commit is in doubt.
func (w *Writer) WritePgFor(t *testing.T, url string, d time.Duration) {
	t.Helper()
	w.Run(context.Background(), t, url, d)
	if w.Err != nil {
		t.Fatal(w.Err)
	}
}
