package cli_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/pkg/status"
)

// TestStatusWhileRunning: with the file store, status reads while run
// holds the lock, and says what a person wants to know: running, who, the
// backfill done, rows per table and op, no error; /status.json serves the
// same report; after SIGTERM status says stopped.
func TestStatusWhileRunning(t *testing.T) {
	e := itest.NewEnv(t, "clistatus")
	e.Exec(`CREATE TABLE orders (id int PRIMARY KEY, note text)`)
	e.Exec(`INSERT INTO orders SELECT g, 'n' FROM generate_series(1, 5) g`)
	cfg := e.WriteConfig("")
	if r, _ := itest.StatusJSON(t, e, cfg); r.State != status.StateNew {
		t.Errorf("before the first run: state %q, want new", r.State)
	}
	addr := itest.FreeAddr(t)
	p := e.Start("run", "--config", cfg, "--http-addr", addr)

	var r status.Report
	var raw string
	itest.WaitFor(t, 60*time.Second, "status to show 5 backfilled rows while running", func() bool {
		if p.Exited() {
			t.Fatalf("run exited:\n%s", p.Out)
		}
		r, raw = itest.StatusJSON(t, e, cfg)
		return r.Live != nil && len(r.Live.Tables) == 1 && r.Live.Tables[0].Rows["r"] == 5
	})
	e.Exec(`INSERT INTO orders VALUES (6, 'x')`)
	e.Exec(`UPDATE orders SET note = 'y' WHERE id = 1`)
	itest.WaitFor(t, 30*time.Second, "status to show the insert and update", func() bool {
		r, raw = itest.StatusJSON(t, e, cfg)
		return r.Live != nil && r.Live.Rows["c"] == 1 && r.Live.Rows["u"] == 1 && r.Backfill != nil && r.Backfill.Done
	})
	if r.State != status.StateRunning || !strings.Contains(r.Owner, fmt.Sprint(p.Cmd.Process.Pid)) {
		t.Errorf("state %q owner %q, want running by pid %d\n%s", r.State, r.Owner, p.Cmd.Process.Pid, raw)
	}
	if r.Checkpoint == nil || !strings.Contains(string(r.Checkpoint.Position), `"lsn"`) {
		t.Errorf("no checkpoint position in the report:\n%s", raw)
	}
	if r.LagBytes == nil {
		t.Errorf("no lag in bytes (%s):\n%s", r.LagBytesError, raw)
	}
	if r.Live.LastError != nil || r.Live.SkippedRows != 0 {
		t.Errorf("a healthy pipeline reports an error or skipped rows:\n%s", raw)
	}
	if tbl := r.Live.Tables[0]; tbl.Table != "public.orders" {
		t.Errorf("table %q, want public.orders", tbl.Table)
	}

	text := itest.StatusText(t, e, cfg)
	for _, want := range []string{"state             running", "backfill          done", "public.orders", "c=1", "lag", "bytes of source log after the checkpoint"} {
		if !strings.Contains(text, want) {
			t.Errorf("status output lacks %q:\n%s", want, text)
		}
	}

	resp, err := http.Get("http://" + addr + "/status.json")
	if err != nil {
		t.Fatal(err)
	}
	var served status.Report
	err = json.NewDecoder(resp.Body).Decode(&served)
	resp.Body.Close()
	if err != nil || served.State != status.StateRunning || served.Live == nil || served.Live.Rows["c"] != 1 {
		t.Errorf("/status.json: %v %+v", err, served)
	}

	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	if r, raw = itest.StatusJSON(t, e, cfg); r.State != status.StateStopped {
		t.Errorf("after SIGTERM: state %q, want stopped\n%s", r.State, raw)
	}
}

// TestStatusDynamoDBWhileRunning: with the DynamoDB store, status reads the
// checkpoint, the lease holder and the live snapshot without taking the
// lease, while run holds it.
func TestStatusDynamoDBWhileRunning(t *testing.T) {
	awstest.Env(t)
	e := itest.NewEnv(t, "clistatusddb")
	e.Exec(`CREATE TABLE items (id int PRIMARY KEY)`)
	e.Exec(`INSERT INTO items SELECT generate_series(1, 3)`)
	table := awstest.Name("status-")
	path := e.WritePipeline(itest.PipelineConfig{
		Checkpoint: itest.DynamoCheckpoint(table) + "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n",
		File:       "ddb.yaml",
	})
	p := e.Start("run", "--config", path)
	var r status.Report
	var raw string
	itest.WaitFor(t, 90*time.Second, "status to show 3 backfilled rows from DynamoDB", func() bool {
		if p.Exited() {
			t.Fatalf("run exited:\n%s", p.Out)
		}
		r, raw = itest.StatusJSON(t, e, path)
		return r.Live != nil && r.Live.Rows["r"] == 3 && r.Checkpoint != nil
	})
	if r.State != status.StateRunning || r.Owner == "" || r.Epoch < 1 {
		t.Errorf("state %q owner %q epoch %d, want running with the lease holder\n%s", r.State, r.Owner, r.Epoch, raw)
	}
	if code := p.Stop(t); code != 0 {
		t.Fatalf("exit %d:\n%s", code, p.Out)
	}
	if r, raw = itest.StatusJSON(t, e, path); r.State != status.StateStopped || r.Live == nil || !r.Live.Stopped {
		t.Errorf("after SIGTERM: state %q, want stopped\n%s", r.State, raw)
	}
}
