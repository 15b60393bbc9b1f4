package cli_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestCLITablesPG: `tributary tables` shows what source.tables,
// exclude_tables, exclude_columns and mask_columns select on PostgreSQL
// (topic, key, replica identity, estimated rows, columns left out and
// masked, the salt never); test-connection fails naming a typo'd table
// with the closest existing one, and when nothing would be captured; run
// refuses a masked key column before it changes anything on the server.
func TestCLITablesPG(t *testing.T) {
	e := itest.NewEnv(t, "clitab")
	e.Exec(`CREATE TABLE customers (id int PRIMARY KEY, email text, ssn text)`)
	e.Exec(`INSERT INTO customers SELECT g, 'e' || g, 's' || g FROM generate_series(1, 50) g`)
	e.Exec(`ANALYZE customers`)
	e.Exec(`CREATE TABLE products (id int PRIMARY KEY)`)
	e.Exec(`CREATE TABLE order_notes (v text)`)
	// Plain names only (a configuration older releases accept): they
	// passed test-connection with the typo.
	plain := e.WritePipeline(itest.PipelineConfig{File: "plain.yaml", Source: "  tables: [public.customers, public.prodcuts]\n"})
	if out, code := e.Run("test-connection", "--config", plain); code != 1 || !strings.Contains(out, "FAIL listed tables") ||
		!strings.Contains(out, "public.prodcuts does not exist") || !strings.Contains(out, "did you mean public.products?") {
		t.Errorf("test-connection with a typo'd plain name: exit %d, want 1 naming it with the closest table:\n%s", code, out)
	}

	cfg := e.WritePipeline(itest.PipelineConfig{Source: `  tables: [public.customers, public.prodcuts, 'public\.order_.*', 'public\.zzz.*']
  exclude_columns: ['public\.customers\.ssn']
  mask_columns:
    - columns: ['public\.customers\.email']
      hash: SHA-256
      salt: very-secret-salt
`})
	out, code := e.Run("tables", "--config", cfg)
	if code != 0 {
		t.Fatalf("tables: exit %d:\n%s", code, out)
	}
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "public.customers ") {
			line = strings.Join(strings.Fields(l), " ")
		}
	}
	if want := "public.customers " + e.Prefix + ".public.customers id default 50 ssn email: hashed SHA-256"; line != want {
		t.Errorf("tables: customers line %q, want %q; output:\n%s", line, want, out)
	}
	for _, want := range []string{"public.prodcuts does not exist", "did you mean public.products?", `public\.zzz.* matches no table`,
		"left out, no replica identity: public.order_notes", "1 tables would be captured"} {
		if !strings.Contains(out, want) {
			t.Errorf("tables: no %q in:\n%s", want, out)
		}
	}
	if strings.Contains(out, "very-secret-salt") {
		t.Errorf("tables shows the salt:\n%s", out)
	}
	out, code = e.Run("tables", "--config", cfg, "--json")
	var r struct {
		Tables []struct {
			Table    string   `json:"table"`
			Key      []string `json:"key"`
			Excluded []string `json:"excluded_columns"`
		} `json:"tables"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out[:strings.LastIndex(out, "}")+1]), &r); code != 0 || err != nil || len(r.Tables) != 1 ||
		fmt.Sprint(r.Tables[0].Key, r.Tables[0].Excluded) != "[id] [ssn]" || len(r.Warnings) != 3 {
		t.Errorf("tables --json: exit %d, %v, %+v:\n%s", code, err, r, out)
	}

	out, code = e.Run("test-connection", "--config", cfg)
	if code != 1 || !strings.Contains(out, "FAIL listed tables") || !strings.Contains(out, "did you mean public.products?") {
		t.Errorf("test-connection with a typo'd table: exit %d, want 1 with the listed tables line failed:\n%s", code, out)
	}

	none := e.WritePipeline(itest.PipelineConfig{File: "none.yaml", Source: "  tables: ['public\\.nothing_.*']\n"})
	if out, code = e.Run("test-connection", "--config", none); code != 1 || !strings.Contains(out, "no table would be captured") {
		t.Errorf("test-connection capturing nothing: exit %d, want 1 saying so:\n%s", code, out)
	}
	if out, code = e.Run("tables", "--config", none); code != 1 || !strings.Contains(out, "0 tables would be captured") {
		t.Errorf("tables capturing nothing: exit %d, want 1:\n%s", code, out)
	}

	key := e.WritePipeline(itest.PipelineConfig{File: "key.yaml", Source: "  tables: [public.customers]\n  mask_columns: [{columns: ['public\\.customers\\.id'], chars: 3}]\n"})
	if out, code = e.Run("run", "--config", key); code != 1 || !strings.Contains(out, "public.customers.id is a key column") {
		t.Errorf("run masking a key column: exit %d, want 1 naming it:\n%s", code, out)
	}
	var pubs int
	if err := e.Conn.QueryRow(context.Background(), `SELECT count(*) FROM pg_publication`).Scan(&pubs); err != nil || pubs != 0 {
		t.Errorf("run refused the config but made a publication (%d, %v)", pubs, err)
	}
}

// TestCLITablesMySQL: the same on MariaDB: `tributary tables` with the
// row estimate and the columns, test-connection naming a missing listed
// table with a suggestion (it only warned before), and a masked column
// that is not text refused.
func TestCLITablesMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "myclitab")
	e.Exec("CREATE TABLE customers (id INT PRIMARY KEY, email VARCHAR(40), born DATE)")
	e.Exec("INSERT INTO customers VALUES (1, 'a@x', '2000-01-01'), (2, 'b@x', NULL)")
	e.Exec("ANALYZE TABLE customers")
	cfg := e.WriteConfig(fmt.Sprintf("  tables: [%s.customers, %s.custmers]\n  mask_columns: [{columns: ['.*\\.customers\\.email'], chars: 4}]\n", e.DB, e.DB))
	out, code := e.Run("tables", "--config", cfg)
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, e.DB+".customers ") {
			line = strings.Join(strings.Fields(l), " ")
		}
	}
	if want := fmt.Sprintf("%s.customers %s.%s.customers id - 2 - email: replaced", e.DB, e.Prefix, e.DB); code != 0 || line != want {
		t.Errorf("tables: exit %d, customers line %q, want %q:\n%s", code, line, want, out)
	}
	plain := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), File: "plain.yaml", Source: fmt.Sprintf("  tables: [%s.customers, %s.custmers]\n", e.DB, e.DB)})
	out, code = e.Run("test-connection", "--config", plain)
	if code != 1 || !strings.Contains(out, e.DB+".custmers does not exist") || !strings.Contains(out, "did you mean "+e.DB+".customers?") {
		t.Errorf("test-connection with a typo'd table: exit %d, want 1 with a suggestion:\n%s", code, out)
	}
	bad := e.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), File: "bad.yaml",
		Source: fmt.Sprintf("  tables: [%s.customers]\n  mask_columns: [{columns: ['.*\\.born'], chars: 4}]\n", e.DB)})
	if out, code = e.Run("run", "--config", bad); code != 1 || !strings.Contains(out, "only character columns can be masked") {
		t.Errorf("run masking a DATE column: exit %d, want 1 saying only character columns can be masked:\n%s", code, out)
	}
}
