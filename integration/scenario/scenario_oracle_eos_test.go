package scenario_test

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// The randomized oracle with delivery exactly_once.
// ORACLE_DELIVERY=exactly_once runs TestRandomOracle (and so `make soak`)
// that way on both sources; TestRandomOracleExactlyOnce is its short form
// in `make test`, PostgreSQL only. The checker then reads every topic as
// a read_committed consumer does and fails on any duplicate, where at
// least once duplicates are only counted.

// eosOracleFeatures are the short form's shapes (ORACLE_FEATURES_EXACTLY_ONCE
// picks others). Its big transaction (eosOracleBigRows) fits in one Kafka
// transaction (transactions.max_records 5000), so a kill aimed at its
// streaming must leave it exactly once too.
const (
	eosOracleFeatures = "keyupdate,multitable,savepoint,rollback,bigtx,nulls"
	eosOracleBigRows  = 4000
)

// TestRandomOracleExactlyOnce is the randomized oracle, exactly once, on
// PostgreSQL: random SIGKILLs (and one aimed at the big transaction)
// while the workload writes, then 0 gaps and 0 duplicates read
// read_committed. ORACLE_SEED, ORACLE_SECONDS (default 40) and
// ORACLE_BIG_ROWS (default 4000) as TestRandomOracle.
func TestRandomOracleExactlyOnce(t *testing.T) {
	itest.SkipShort(t)
	t.Setenv("ORACLE_DELIVERY", config.DeliveryExactlyOnce)
	if os.Getenv("ORACLE_FEATURES_EXACTLY_ONCE") == "" {
		t.Setenv("ORACLE_FEATURES_EXACTLY_ONCE", eosOracleFeatures)
	}
	seed := oracleSeed(t)
	d := time.Duration(envInt(t, "ORACLE_SECONDS", 40)) * time.Second
	bigRows := envInt(t, "ORACLE_BIG_ROWS", eosOracleBigRows)
	t.Run("postgres", func(t *testing.T) {
		f := parseFeatures(t, "exactly_once")
		t.Logf("seed %d, features %s; replay: ORACLE_SEED=%d ORACLE_FEATURES_EXACTLY_ONCE=%s go test -count=1 -v -run 'TestRandomOracleExactlyOnce' ./integration/scenario/",
			seed, f, seed, f)
		runRandomOracle(t, itest.NewPGBackend(t, "rnde"), seed, f, d, bigRows)
	})
}

// oracleExactlyOnce reads ORACLE_DELIVERY: at_least_once (default) or
// exactly_once.
func oracleExactlyOnce(t *testing.T) bool {
	switch d := os.Getenv("ORACLE_DELIVERY"); d {
	case "", config.DeliveryAtLeastOnce:
		return false
	case config.DeliveryExactlyOnce:
		return true
	default:
		t.Fatalf("ORACLE_DELIVERY=%q: want %s or %s", d, config.DeliveryAtLeastOnce, config.DeliveryExactlyOnce)
		return false
	}
}

// splitTx tells whether seq belongs to the big transaction and that one
// was larger than a Kafka transaction (the pipeline runs with the default
// transactions.max_records), so exactly once split it.
func splitTx(w *workload, seq int64) bool {
	from, to := w.bigSeqs[0], w.bigSeqs[1]
	return from > 0 && to-from+1 > config.DefaultTransactionMaxRecords && seq >= from && seq <= to
}

// eosSummary is the exactly-once part of the oracle's report line.
func eosSummary(run *oracleRun, f oracleFindings) string {
	if !run.readsCommitted() {
		return ""
	}
	return fmt.Sprintf(" | read_committed: duplicates=%d (of a split big transaction %d)", f.eosDups, f.splitDups)
}
