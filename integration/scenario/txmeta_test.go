package scenario_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// txmetaStream is the transactions both sides see: one over two tables,
// a single row, and an update changing a key (a delete, its tombstone and
// a create in one transaction).
var txmetaStream = []string{
	`BEGIN`, `INSERT INTO tx_a VALUES (2, 'two')`, `INSERT INTO tx_b VALUES (20, 'twenty')`,
	`UPDATE tx_a SET v = 'deux' WHERE id = 2`, `INSERT INTO tx_b VALUES (21, 'x')`, `COMMIT`,
	`INSERT INTO tx_a VALUES (3, 'three')`,
	`UPDATE tx_a SET id = 30 WHERE id = 3`,
}

func TestTxMetaDumpPostgres(t *testing.T) {
	if os.Getenv("TXDUMP") == "" {
		t.Skip()
	}
	e := itest.NewEnv(t, "txdpg")
	e.Exec(`CREATE TABLE tx_a (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE tx_b (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO tx_a VALUES (1, 'one')`)
	for _, schemas := range []string{"true", "false"} {
		out := filepath.Join(e.Dir, "dbz-"+schemas+".jsonl")
		de := *e
		de.Dir, de.Name = filepath.Join(e.Dir, schemas), e.Name+"_"+schemas
		os.MkdirAll(de.Dir, 0o700)
		d := itest.StartDebezium(t, &de, out, 0, "provide.transaction.metadata=true\nconverter.schemas.enable="+schemas+"\ntable.include.list=public\\\\.tx_.*\n")
		itest.WaitFor(t, 120*time.Second, "snapshot", func() bool { return itest.CountLines(out) >= 1 })
		for _, s := range txmetaStream {
			e.Exec(s)
		}
		time.Sleep(15 * time.Second)
		d.Stop()
		b, _ := os.ReadFile(out)
		os.WriteFile("/tmp/txmeta/pg-"+schemas+".jsonl", b, 0o644)
	}
}

func TestTxMetaDumpMySQL(t *testing.T) {
	if os.Getenv("TXDUMP") == "" {
		t.Skip()
	}
	e := itest.NewMyEnv(t, "txdmy")
	e.Exec(`CREATE TABLE tx_a (id int PRIMARY KEY, v text)`)
	e.Exec(`CREATE TABLE tx_b (id int PRIMARY KEY, v text)`)
	e.Exec(`INSERT INTO tx_a VALUES (1, 'one')`)
	for _, schemas := range []string{"true", "false"} {
		out := filepath.Join(e.Dir, "dbz-"+schemas+".jsonl")
		de := *e
		env := *e.Env
		env.Dir = filepath.Join(e.Dir, schemas)
		os.MkdirAll(env.Dir, 0o700)
		de.Env = &env
		d := itest.StartMariaDBDebezium(t, &de, out, 0, "provide.transaction.metadata=true\nconverter.schemas.enable="+schemas+"\n")
		itest.WaitFor(t, 120*time.Second, "snapshot", func() bool { return itest.CountLines(out) >= 1 })
		for _, s := range txmetaStream {
			e.Exec(s)
		}
		time.Sleep(15 * time.Second)
		d.Stop()
		b, _ := os.ReadFile(out)
		os.WriteFile("/tmp/txmeta/my-"+schemas+".jsonl", b, 0o644)
	}
}
