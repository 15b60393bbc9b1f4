package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/jackc/pgx/v5"
)

func withSourceURL(t *testing.T, cfg, from, to string) {
	t.Helper()
	doc, _ := os.ReadFile(cfg)
	changed := strings.Replace(string(doc), from, to, 1)
	if changed == string(doc) {
		t.Fatalf("no %q in the config", from)
	}
	writeText(t, cfg, changed)
}

// TestTestConnectionChecksPostgres: test-connection reports each source
// check with its fix: all pass for a replication user; a user without
// the REPLICATION attribute fails that one check (exit 1) with the ALTER
// ROLE that fixes it; a wrong password fails the connection and never
// appears in the output.
func TestTestConnectionChecksPostgres(t *testing.T) {
	e := itest.NewEnv(t, "cliconnpg")
	e.Exec(`CREATE TABLE t (id int PRIMARY KEY)`) // an empty database captures nothing: a failed check
	cfg := e.WriteConfig("")
	code, out := itest.TestConnection(t, e, cfg, "--json")
	var r itest.ConnReport
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || !r.OK {
		t.Fatalf("superuser: exit %d:\n%s", code, out)
	}
	names := map[string]bool{}
	for _, c := range r.Source {
		names[c.Name] = c.OK
	}
	for _, want := range []string{"source connection", "wal_level", "replication grant", "publication", "replication slot"} {
		if ok, seen := names[want]; !seen || !ok {
			t.Errorf("source check %q: seen %v ok %v\n%s", want, seen, ok, out)
		}
	}
	if len(r.Checks) == 0 {
		t.Errorf("no Kafka checks in the same report:\n%s", out)
	}

	const canary = "canary-C0nnT3st-pw"
	role := fmt.Sprintf("conntest_%d", rand.IntN(1_000_000))
	admin, err := pgx.Connect(context.Background(), itest.PGAdminURL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), "CREATE ROLE "+role+" LOGIN PASSWORD '"+canary+"'"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })

	withSourceURL(t, cfg, "postgres:postgres@", role+":"+canary+"@")
	code, out = itest.TestConnection(t, e, cfg)
	// The fix is named in RDS terms while a test of pkg/source/postgres,
	// running beside this one, has made the cluster look like RDS (a
	// cluster-wide rds_replication role).
	fixed := strings.Contains(out, `fix: ALTER ROLE "`+role+`" WITH REPLICATION`) ||
		strings.Contains(out, `fix: as the master user, GRANT rds_replication TO "`+role+`"`)
	if code != 1 || !strings.Contains(out, "FAIL replication grant") || !fixed {
		t.Errorf("user without REPLICATION: exit %d, want 1 and the failed check with its fix:\n%s", code, out)
	}
	if !strings.Contains(out, "ok   wal_level") {
		t.Errorf("the other checks are not reported:\n%s", out)
	}

	withSourceURL(t, cfg, role+":"+canary+"@", role+":wrong-"+canary+"@")
	code, out = itest.TestConnection(t, e, cfg)
	if code != 1 || !strings.Contains(out, "FAIL source connection") || !strings.Contains(out, "password") {
		t.Errorf("wrong password: exit %d:\n%s", code, out)
	}
	if strings.Contains(out, canary) {
		t.Errorf("the password appears in the output:\n%s", out)
	}
}

// TestTestConnectionChecksMySQL: every binlog setting is a line; a user
// without replication grants fails that check with the GRANT that fixes it.
func TestTestConnectionChecksMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "cliconnmy")
	e.Exec("CREATE TABLE t (id INT PRIMARY KEY)") // something to capture
	cfg := e.WriteConfig("")
	code, out := itest.TestConnection(t, e.Env, cfg)
	if code != 0 {
		t.Fatalf("root: exit %d:\n%s", code, out)
	}
	for _, want := range []string{"ok   source connection", "ok   log_bin", "ok   binlog_format", "ok   binlog_row_image", "ok   server_id", "ok   replication grants", "ok   captured tables    1 tables: " + e.DB + ".t", "ok   signal table"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	user := fmt.Sprintf("conn%d", rand.IntN(1_000_000))
	e.Exec("CREATE USER '" + user + "'@'%' IDENTIFIED BY 'pw-" + user + "'")
	t.Cleanup(func() { e.My.Execute("DROP USER IF EXISTS '" + user + "'@'%'") })
	e.Exec("GRANT SELECT ON " + e.DB + ".* TO '" + user + "'@'%'")
	withSourceURL(t, cfg, "root:root@", user+":pw-"+user+"@")
	code, out = itest.TestConnection(t, e.Env, cfg)
	if code != 1 || !strings.Contains(out, "FAIL replication grants") || !strings.Contains(out, "fix: GRANT REPLICATION SLAVE") {
		t.Errorf("user without grants: exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "FAIL signal table") || !strings.Contains(out, "GRANT SELECT, INSERT, UPDATE ON `"+e.DB+"`.`tributary_signal`") {
		t.Errorf("user who may not write the signal table: no check naming the grant:\n%s", out)
	}
}
