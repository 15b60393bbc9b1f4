package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
	"github.com/tributary-cdc/tributary/pkg/config"
)

func backfillConfig(t *testing.T, extra string) (cfgPath, dir string) {
	t.Helper()
	dir = t.TempDir()
	return writeFile(t, goodConfig+"checkpoint:\n  path: "+dir+"\n"+extra), dir
}

func TestBackfillHelpListsItsFlags(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"--help"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "  backfill ") {
		t.Fatalf("--help (exit %d) does not list backfill:\n%s", code, stdout.String())
	}
	stdout.Reset()
	if code := mainExit([]string{"backfill", "--help"}, &stdout, &stderr); code != 0 {
		t.Fatalf("backfill --help: exit %d", code)
	}
	for _, flag := range []string{"-table", "-all", "-config"} {
		if !strings.Contains(stdout.String(), flag) {
			t.Errorf("backfill --help does not list %s:\n%s", flag, stdout.String())
		}
	}
}

// Bad arguments exit 2 with a message naming the flag or the table, and
// queue nothing.
func TestBackfillBadArgumentsExit2(t *testing.T) {
	cfg, dir := backfillConfig(t, "")
	limited := writeFile(t, strings.Replace(goodConfig, "source:\n", "source:\n  tables: [public.orders, public.customers]\n", 1)+"checkpoint:\n  path: "+dir+"\n")
	if _, err := checkpoint.OpenFile(dir, "shop"); err != nil { // as a running pipeline would
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"backfill", "--config", cfg}, "give --table <schema.table>[,…] or --all"},
		{[]string{"backfill", "--config", cfg, "--all", "--table", "public.a"}, "--table and --all exclude each other"},
		{[]string{"backfill", "--config", cfg, "--table", "orders"}, `table "orders" must be schema.table`},
		{[]string{"backfill", "--config", cfg, "--table", "public.a,,public.b"}, `--table "public.a,,public.b" holds an empty table name`},
		{[]string{"backfill", "--config", limited, "--table", "public.orders,public.refunds"}, `table "public.refunds" is not in source.tables (public.orders, public.customers)`},
		{[]string{"backfill", "--config", cfg, "--table", "public.a", "extra"}, "usage: tributary backfill"},
	} {
		var stdout, stderr bytes.Buffer
		if code := mainExit(tc.args, &stdout, &stderr); code != 2 {
			t.Errorf("%v: exit %d, want 2", tc.args, code)
		}
		if !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: stderr %q lacks %q", tc.args, stderr.String(), tc.want)
		}
	}
	if req, err := checkpoint.PendingFile(dir, "shop"); err != nil || !req.Empty() {
		t.Fatalf("bad arguments queued %+v (%v)", req, err)
	}
}

// The request lands in the file store next to the checkpoint while the
// pipeline's lock is held; status shows it as waiting.
func TestBackfillFileStore(t *testing.T) {
	cfg, dir := backfillConfig(t, "")
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"backfill", "--config", cfg, "--table", "public.b"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "nothing queued: pipeline shop has never run") {
		t.Fatalf("never ran: exit %d, stderr %s", code, stderr.String())
	}
	store, err := checkpoint.OpenFile(dir, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	stdout.Reset()
	if code := mainExit([]string{"backfill", "--config", cfg, "--table", "public.b, public.a"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	for _, want := range []string{"queued a backfill of public.a, public.b for pipeline shop", "pipeline is not running: the next `tributary run`"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	req, err := store.PendingBackfill(context.Background())
	if err != nil || strings.Join(req.Tables, ",") != "public.a,public.b" {
		t.Fatalf("pending %+v, %v", req, err)
	}
	stdout.Reset()
	if code := mainExit([]string{"status", "--config", cfg, "--json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("status: exit %d: %s", code, stderr.String())
	}
	var r struct {
		Requested *checkpoint.Request `json:"backfill_requested"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil || r.Requested == nil || len(r.Requested.Tables) != 2 {
		t.Fatalf("status --json: %v %+v\n%s", err, r.Requested, stdout.String())
	}
}

// With the DynamoDB store the request goes into the pipeline's item (moto).
func TestBackfillDynamoDBStore(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the AWS emulator of `make services-up`")
	}
	if c, err := net.DialTimeout("tcp", "127.0.0.1:5000", 2*time.Second); err != nil {
		t.Fatalf("AWS emulator not reachable on 127.0.0.1:5000 (run `make services-up`): %v", err)
	} else {
		c.Close()
	}
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		t.Setenv(k, v)
	}
	table := fmt.Sprintf("tributary-cli-%d-%d", os.Getpid(), rand.IntN(1e6))
	cfg, _ := backfillConfig(t, "  store: dynamodb\n  table: "+table+"\n  create_table: true\n")
	ctx := context.Background()
	client, err := checkpoint.NewDynamoDBClient(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := mainExit([]string{"backfill", "--config", cfg, "--all"}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "has never run") {
		t.Fatalf("no table yet: exit %d, %s", code, stderr.String())
	}
	store, err := checkpoint.OpenDynamoDB(ctx, client, checkpoint.DynamoDBOptions{Table: table, Pipeline: "shop", CreateTable: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if code := mainExit([]string{"backfill", "--config", cfg, "--all"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "queued a backfill of every table for pipeline shop") {
		t.Errorf("stdout:\n%s", stdout.String())
	}
	if req, err := store.PendingBackfill(ctx); err != nil || !req.All {
		t.Fatalf("pending %+v, %v", req, err)
	}
}

// A table a source.tables pattern selects may be backfilled by name; one
// source.exclude_tables leaves out may not.
func TestBackfillRequestPatterns(t *testing.T) {
	cfg := &config.Config{Source: config.Source{Tables: []string{`public\.order_.*`, "public.customers"}, ExcludeTables: []string{`public\.order_archive`}}}
	if req, err := backfillRequest(cfg, "public.order_lines,public.customers", false); err != nil || len(req.Tables) != 2 {
		t.Errorf("pattern-selected tables: %+v, %v", req, err)
	}
	if _, err := backfillRequest(cfg, "public.order_archive", false); err == nil || !strings.Contains(err.Error(), "not in source.tables") {
		t.Errorf("an excluded table: %v, want refused", err)
	}
	cfg = &config.Config{Source: config.Source{ExcludeTables: []string{`public\.audit_.*`}}}
	if _, err := backfillRequest(cfg, "public.audit_log", false); err == nil || !strings.Contains(err.Error(), "source.exclude_tables") {
		t.Errorf("an excluded table without a list: %v, want refused naming source.exclude_tables", err)
	}
}
