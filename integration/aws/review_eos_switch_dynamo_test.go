package aws_test

// A review check that held (passes on the reviewed code); it runs only
// with TRIBUTARY_REVIEW_HELD=1 (reviewHeld).
//
// The delivery-mode switch (pkg/pipeline/exactlyonce.go
// resumeFrom, pkg/checkpoint/dynamodb.go delivery): with the DynamoDB
// store (moto, then dynalite), the pipeline switches exactly_once → at_least_once (ended
// by SIGKILL) → exactly_once → at_least_once → exactly_once (SIGKILLed
// right after a commit, then restarted). A read_committed consumer must
// see every row, and each row inserted during an exactly_once phase once
// (rows of an at_least_once phase may repeat).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/integration/itest"
)

func TestReviewDeliverySwitchDynamoCrashes(t *testing.T) {
	itest.ReviewHeld(t)
	awstest.ForEachDynamoDB(t, reviewDeliverySwitchDynamoCrashes)
}

func reviewDeliverySwitchDynamoCrashes(t *testing.T, eng awstest.Engine) {
	b := itest.BackendNamed(t, "postgres", "rvswitch")
	e := b.Env()
	useEngine(t, eng)
	itest.CreateTables(t, b, "t", "sentinel")
	itest.MustExecOn(t, b, b.BulkInsert("t", 0, 0, 100))
	alo := b.Config(nil, "")
	body, err := os.ReadFile(alo)
	if err != nil {
		t.Fatal(err)
	}
	ck := "checkpoint:\n  path: " + filepath.Join(e.Dir, "checkpoints") + "\n"
	if !strings.Contains(string(body), ck) {
		t.Fatalf("config has no %q", ck)
	}
	body = []byte(strings.Replace(string(body), ck, "checkpoint:\n"+itest.DynamoCheckpoint(itest.TestTableName("rvswitch")), 1))
	if err := os.WriteFile(alo, body, 0o600); err != nil {
		t.Fatal(err)
	}
	eos := filepath.Join(e.Dir, "eos.yaml")
	if err := os.WriteFile(eos, append(body, itest.ExactlyOnceLines...), 0o600); err != nil {
		t.Fatal(err)
	}

	type phase struct {
		cfg, mode string
		rows      int
		end       string // "term", "kill", or a crash point
	}
	phases := []phase{
		{eos, "exactly_once", 300, "term"},
		{alo, "at_least_once", 1000, "kill"},
		{eos, "exactly_once", 500, "term"},
		{alo, "at_least_once", 300, "term"},
		{eos, "exactly_once", 2000, "after-txn-commit:3"},
		{eos, "exactly_once", 200, "term"},
	}
	next := int64(100)
	aloKeys := map[int]bool{}
	sent := 0
	for i, ph := range phases {
		var p *itest.Proc
		if strings.HasPrefix(ph.end, "after-") {
			p = e.StartWith([]string{"TRIBUTARY_TEST_CRASH=" + ph.end}, "run", "--config", ph.cfg)
		} else {
			p = e.Start("run", "--config", ph.cfg)
		}
		sent++
		if !strings.HasPrefix(ph.end, "after-") {
			itest.AwaitBackendSentinelCommitted(t, b, p, sent)
		}
		// In transactions of 50 rows, so that commits happen among them.
		for j := 0; j < ph.rows; j += 50 {
			itest.MustExecOn(t, b, b.BulkInsert("t", next, next, 50))
			if ph.mode == "at_least_once" {
				for k := next + 1; k <= next+50; k++ {
					aloKeys[int(k)] = true
				}
			}
			next += 50
		}
		switch ph.end {
		case "term":
			sent++
			itest.AwaitBackendSentinelCommitted(t, b, p, sent)
			if code := p.Stop(t); code != 0 {
				t.Fatalf("phase %d (%s): exit %d; output:\n%s", i+1, ph.mode, code, p.Out)
			}
		case "kill":
			sent++
			itest.AwaitBackendSentinelCommitted(t, b, p, sent)
			p.Kill()
		default:
			select {
			case <-p.Done:
			case <-time.After(90 * time.Second):
				t.Fatalf("phase %d: crash point %s not reached; output:\n%s", i+1, ph.end, p.Out)
			}
			if !p.KilledBy(syscall.SIGKILL) {
				t.Fatalf("phase %d ended with %v, not its own SIGKILL; output:\n%s", i+1, p.Err, p.Out)
			}
		}
		for _, line := range strings.Split(p.Out.String(), "\n") {
			if strings.Contains(line, "resuming from") {
				t.Logf("phase %d (%s): %.300s", i+1, ph.mode, line)
			}
		}
	}

	seen := map[int]int{}
	for _, m := range itest.ReadCommitted(t, b.Topic("t")) {
		seen[int(m.Key["payload"].(map[string]any)["k"].(float64))]++
	}
	gaps, dups, aloDups := 0, 0, 0
	var first []string
	for k := 1; k <= int(next); k++ {
		switch n := seen[k]; {
		case n == 0:
			gaps++
			if len(first) < 5 {
				first = append(first, fmt.Sprint(k))
			}
		case n > 1 && aloKeys[k]:
			aloDups += n - 1
		case n > 1:
			dups += n - 1
			if len(first) < 5 {
				first = append(first, fmt.Sprint(k))
			}
		}
	}
	t.Logf("%d rows: %d gaps, %d duplicates of exactly_once rows, %d of at_least_once rows (allowed)", next, gaps, dups, aloDups)
	if gaps > 0 || dups > 0 {
		t.Fatalf("%d gaps and %d duplicates of rows inserted exactly_once (first %v), want 0 and 0", gaps, dups, first)
	}
}
