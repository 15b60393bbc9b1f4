package postgres_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGNonBMPBytesAgainstDebezium: text outside the Basic Multilingual
// Plane (emoji and other supplementary characters), in a key, in a value
// and in a column name, is written with the very bytes Debezium's
// PostgreSQL connector writes: Jackson escapes each such character as a
// UTF-16 surrogate pair with upper-case hex (\uD83D\uDE00) and writes BMP
// text raw. A consumer decodes raw UTF-8 and the escapes alike, so the
// differential tests comparing decoded JSON could not see the difference;
// this one compares each field's JSON text, in the snapshot and in the
// stream, with schemas and without (JsonConverter's schemas.enable=false,
// Tributary's format.schemas: false).
func TestPGNonBMPBytesAgainstDebezium(t *testing.T) {
	for _, schemas := range []bool{true, false} {
		name := map[bool]string{true: "schemas", false: "no_schemas"}[schemas]
		t.Run(name, func(t *testing.T) { testPGNonBMPBytes(t, schemas) })
	}
}

func testPGNonBMPBytes(t *testing.T, schemas bool) {
	e := itest.NewEnv(t, "pgnonbmp")
	e.Exec("CREATE TABLE t (k text PRIMARY KEY, v text, \"n\U0001F600\" text)")
	e.Exec(`INSERT INTO t VALUES ($1, $2, $3)`, nonBMPKey1, nonBMPValue, "x\U0001F4A9")
	out := filepath.Join(e.Dir, "debezium.jsonl")
	extra := []string{"table.include.list=public.t\n", "publication.autocreate.mode=filtered\n"}
	if !schemas {
		extra = append(extra, "converter.schemas.enable=false\n")
	}
	dbz := itest.StartDebezium(t, e, out, 0, extra...)
	defer dbz.Stop()
	cfg := e.WritePipeline(itest.PipelineConfig{Source: "  tables: [public.t]\n"})
	if !schemas {
		itest.AppendConfig(t, cfg, "format:\n  schemas: false\n")
	}
	p := e.Start("run", "--config", cfg)
	topic := e.Prefix + ".public.t"
	itest.WaitOrDump(t, p, 120*time.Second, "the snapshot row from each", func() bool {
		return itest.CountLines(out) >= 1 && itest.TopicEnd(topic) >= 1
	})
	e.Exec(`INSERT INTO t VALUES ($1, $2, NULL)`, nonBMPKey2, nonBMPValue)
	itest.WaitOrDump(t, p, 120*time.Second, "the streamed row from each", func() bool {
		return itest.CountLines(out) >= 2 && itest.TopicEnd(topic) >= 2
	})
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	itest.CompareFieldBytes(t, itest.DebeziumRecordBytes(t, out, schemas), itest.TopicRecordBytes(t, topic, schemas), 2)
}

// The rows' text: supplementary characters (U+1F600, U+10348, U+1F4A9)
// beside BMP non-ASCII text (é, 中, U+FFFD) that both write raw.
const (
	nonBMPKey1  = "k\U0001F600"
	nonBMPKey2  = "\U00010348\U0001F4A9 key"
	nonBMPValue = "emoji \U0001F600, gothic \U00010348, pile \U0001F4A9; é 中 \uFFFD"
)
