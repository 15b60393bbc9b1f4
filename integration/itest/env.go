package itest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The shared services of `make services-up`: PostgreSQL as its
// superuser, and Kafka's PLAINTEXT listener.
const (
	PGAdminURL = "postgres://postgres:postgres@127.0.0.1:5432/postgres"
	KafkaAddr  = "127.0.0.1:9092"
)

// the tributary binary under test, built once

// Env is one test's isolated world: a database, a pipeline name (and so a
// slot and publication) and a topic prefix of its own.
type Env struct {
	T      *testing.T
	Name   string // pipeline name
	DB     string
	Prefix string
	Dir    string // working dir: config, checkpoints, logs
	Conn   *pgx.Conn
}

// NewEnv makes t's PostgreSQL world: a database of its own (dropped,
// with its slots, when t ends), a pipeline name and a topic prefix.
func NewEnv(t *testing.T, label string) *Env {
	SkipShort(t)
	e := BareEnv(t, label)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, PGAdminURL)
	if err != nil {
		t.Fatalf("connect to postgres (is `make services-up` done?): %v", err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.DB); err != nil {
		t.Fatal(err)
	}
	admin.Close(ctx)
	e.Conn, err = pgx.Connect(ctx, e.PGURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.Conn.Close(context.Background())
		admin, err := pgx.Connect(context.Background(), PGAdminURL)
		if err != nil {
			return
		}
		defer admin.Close(context.Background())
		// A slot pins WAL and blocks DROP DATABASE: drop it first.
		for i := 0; i < 40; i++ {
			_, err = admin.Exec(context.Background(), `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, e.DB)
			if err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		admin.Exec(context.Background(), "DROP DATABASE IF EXISTS "+e.DB+" WITH (FORCE)")
	})
	return e
}

// PGURL is the URL of e's database on the shared PostgreSQL.
func (e *Env) PGURL() string {
	return "postgres://postgres:postgres@127.0.0.1:5432/" + e.DB
}

// Exec runs sql on e's database, or fails the test.
func (e *Env) Exec(sql string, args ...any) {
	e.T.Helper()
	if _, err := e.Conn.Exec(context.Background(), sql, args...); err != nil {
		e.T.Fatalf("%s: %v", sql, err)
	}
}

// PipelineConfig is what the tests' pipeline configs differ in; the rest
// (Kafka without TLS, topics created when missing, a prefix of the test's
// own) is the same for all.
type PipelineConfig struct {
	Typ, URL    string // the source; "": e's PostgreSQL database
	Source      string // lines added to the source section
	Destination string // lines added to the destination section
	Checkpoint  string // the checkpoint section; "": a file store in e.dir
	File        string // the config's name in e.dir; "": pipeline.yaml
}

// WritePipeline writes the pipeline config c describes and returns its path.
func (e *Env) WritePipeline(c PipelineConfig) string {
	e.T.Helper()
	if c.Typ == "" {
		c.Typ, c.URL = "postgres", e.PGURL()
	}
	if c.Checkpoint == "" {
		c.Checkpoint = "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n"
	}
	if c.File == "" {
		c.File = "pipeline.yaml"
	}
	cfg := fmt.Sprintf(`name: %s
source:
  type: %s
  url: %s
%sdestination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  create_missing_topics: true
%scheckpoint:
%s`, e.Name, c.Typ, c.URL, c.Source, KafkaAddr, e.Prefix, c.Destination, c.Checkpoint)
	path := filepath.Join(e.Dir, c.File)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// WriteConfig writes the pipeline config and returns its path. extra is
// appended to the destination section.
func (e *Env) WriteConfig(extra string) string {
	return e.WritePipeline(PipelineConfig{Destination: extra})
}

// AppendConfig appends text (top-level sections) to the config at path.
func AppendConfig(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.WriteString(text)
}

// EditConfig replaces the first old in the config at path by new.
func EditConfig(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q", path, old)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// WriteTablesConfig writes a file-store pipeline config whose
// source.tables is tables (none: every table with a primary key).
func (e *Env) WriteTablesConfig(tables ...string) string {
	list := ""
	if len(tables) > 0 {
		list = "  tables: [" + strings.Join(tables, ", ") + "]\n"
	}
	return e.WritePipeline(PipelineConfig{Source: list})
}

// WriteSourceConfig is WriteConfig with lines added to the source section
// too.
func (e *Env) WriteSourceConfig(source, destination string) string {
	return e.WritePipeline(PipelineConfig{Source: source, Destination: destination})
}

// ExactlyOnceLines turn a pipeline config into an exactly-once one; they
// go after the checkpoint section (top level).
const ExactlyOnceLines = "delivery: exactly_once\n"

// idSeq numbers the IDs of this process from a random start, so that a
// process running many rounds (DIFF_MINUTES, make soak) never draws one
// twice, as four random digits did (a topic that already existed).
var idSeq atomic.Uint32

func init() { idSeq.Store(rand.Uint32N(10000)) }

// UniqueID is label_<pid>_<nnnn>, unique to this test process and run:
// the base of a database, pipeline, topic or table name.
func UniqueID(label string) string {
	return fmt.Sprintf("%s_%d_%04d", label, os.Getpid()%100000, idSeq.Add(1)%10000)
}

// UniqueName is a UniqueID with hyphens, label-<pid>-<nnnn>: the base of a
// topic prefix or a DynamoDB table name.
func UniqueName(label string) string { return strings.ReplaceAll(UniqueID(label), "_", "-") }

// BareEnv is an Env's names (of one UniqueID) and working dir, before its
// database is made: NewEnv's and NewMyEnvAt's first step, and that of a
// test's own environment on another server.
func BareEnv(t *testing.T, label string) *Env {
	id := UniqueID(label)
	return &Env{T: t, Name: id, DB: "it_" + id, Prefix: "it-" + strings.ReplaceAll(id, "_", "-"), Dir: t.TempDir()}
}
