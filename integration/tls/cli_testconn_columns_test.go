package tls_test

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestTestConnectionColumnsAndTLSPostgres: test-connection names, on a
// "column types" line that does not fail the test, each column run would
// leave out of its messages with its type (no silent drops, told before
// the first run too), or says every column has an encoding;
// with source.include_unknown_types it names them as published as text.
// The "source TLS" line says "no TLS" for the plaintext test server.
func TestTestConnectionColumnsAndTLSPostgres(t *testing.T) {
	e := itest.NewEnv(t, "cliconncols")
	e.Exec(`CREATE TABLE plain (id integer PRIMARY KEY, note text)`)
	cfg := e.WriteConfig("")
	code, out := itest.TestConnection(t, e, cfg)
	if code != 0 || !strings.Contains(out, "ok   column types       every column of the 1 captured tables has an encoding") {
		t.Errorf("known types only: exit %d:\n%s", code, out)
	}
	if !strings.Contains(out, "ok   source TLS         no TLS") {
		t.Errorf("plaintext server: no \"no TLS\" line:\n%s", out)
	}

	e.Exec(itest.UnknownTypesTable)
	code, out = itest.TestConnection(t, e, cfg)
	if code != 0 || !strings.Contains(out, "ok   column types       left out of messages") ||
		!strings.Contains(out, "public.odd.q (tsquery)") || !strings.Contains(out, "public.odd.b (box)") ||
		strings.Contains(out, "public.odd.note") || strings.Contains(out, "public.plain") {
		t.Errorf("tsquery and box columns: exit %d, want 0 and both named:\n%s", code, out)
	}

	cfg = e.WritePipeline(itest.PipelineConfig{Source: "  include_unknown_types: true\n"})
	code, out = itest.TestConnection(t, e, cfg)
	if code != 0 || !strings.Contains(out, "published as text (source.include_unknown_types): public.odd.q (tsquery), public.odd.b (box)") {
		t.Errorf("include_unknown_types: exit %d:\n%s", code, out)
	}
}

// TestTestConnectionColumnsAndTLSMySQL: the same two lines for MariaDB.
func TestTestConnectionColumnsAndTLSMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "cliconncolsmy")
	e.Exec("CREATE TABLE plain (id int PRIMARY KEY, note text)")
	code, out := itest.TestConnection(t, e.Env, e.WriteConfig(""))
	if code != 0 || !strings.Contains(out, "ok   column types       every column of the 1 captured tables has an encoding") ||
		!strings.Contains(out, "ok   source TLS         no TLS") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestTestConnectionTLSState: against the TLS-only servers of
// tls-sources.sh, the "source TLS" line gives the version and says the
// certificate was verified against source.ca_certificate with the host
// name checked, for PostgreSQL and MariaDB.
func TestTestConnectionTLSState(t *testing.T) {
	e := newTLSEnv(t, "conntls")
	withCA := "  ca_certificate: ${env:TLS_IT_CA}\n"
	for _, tc := range []struct{ name, source string }{
		{"postgres", "  type: postgres\n  url: postgres://postgres:postgres@" + tlsPGAddr + "/postgres?sslmode=verify-full\n" + withCA},
		{"mariadb", "  type: mysql\n  url: mysql://root:root@" + tlsMariaDBAddr + "/mysql\n  tables: [mysql.db]\n" + withCA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.T = t
			_, out := itest.TestConnection(t, e.Env, e.writeSource(tc.source))
			if !strings.Contains(out, "ok   source TLS         TLS 1.") ||
				!strings.Contains(out, "certificate verified against source.ca_certificate, host name checked") {
				t.Errorf("want the TLS version with its verification:\n%s", out)
			}
			// These servers hold no user table, so "listed tables" fails
			// (nothing to capture); every other line must pass.
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "FAIL") && !strings.HasPrefix(l, "FAIL listed tables") {
					t.Errorf("a failing line: %s\n%s", l, out)
				}
			}
		})
	}
}
