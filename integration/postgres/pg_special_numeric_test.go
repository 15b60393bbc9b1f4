package postgres_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestPGSpecialNumericNotNull: NaN and ±Infinity in NOT NULL numeric and
// numeric[] columns (legal since PostgreSQL 14) cannot be a Connect
// Decimal under decimal_handling precise. Such a row used to stop the
// pipeline, at the snapshot and in the stream, on every restart. Now it
// is recorded as row.skipped, naming the column and the way to publish
// it (decimal_handling string or double), and the pipeline goes on;
// under decimal_handling string the same rows are published.
func TestPGSpecialNumericNotNull(t *testing.T) {
	for _, mode := range []string{"precise", "string"} {
		t.Run(mode, func(t *testing.T) {
			e := itest.NewEnv(t, "pgnan"+mode)
			e.Exec(`CREATE TABLE n (k int PRIMARY KEY, a numeric NOT NULL, b numeric(10,2) NOT NULL, c numeric[] NOT NULL)`)
			// Snapshot rows: 1 and 5 are plain; 2, 3, 4 hold a special value
			// (a constrained numeric holds NaN, not the infinities).
			e.Exec(`INSERT INTO n VALUES (1, 1.5, 2.25, '{1}'), (2, 'NaN', 1, '{1}'), (3, 'Infinity', 'NaN', '{1}'),
				(4, 1, 1, '{1,-Infinity}'), (5, 2, 2, '{2}')`)
			// A key column holding one: the key itself cannot be written.
			e.Exec(`CREATE TABLE nk (k numeric PRIMARY KEY, v int NOT NULL)`)
			e.Exec(`INSERT INTO nk VALUES (1, 1), ('NaN', 2)`)
			// A delete whose old row (REPLICA IDENTITY FULL) holds one: it
			// is published with its key for old row, as under the default
			// replica identity, and its tombstone.
			e.Exec(`CREATE TABLE nf (k int PRIMARY KEY, a numeric NOT NULL)`)
			e.Exec(`ALTER TABLE nf REPLICA IDENTITY FULL`)
			e.Exec(`INSERT INTO nf VALUES (1, 'NaN')`)
			topic, keyTopic, fullTopic := e.Prefix+".public.n", e.Prefix+".public.nk", e.Prefix+".public.nf"
			cfg := e.WritePipeline(itest.PipelineConfig{Destination: "  delete_mode: record_and_tombstone\n"})
			itest.AppendConfig(t, cfg, "format:\n  decimal_handling: "+mode+"\n")
			p := e.Start("run", "--config", cfg)
			itest.WaitOrDump(t, p, 90*time.Second, "the snapshot's plain rows", func() bool { return keysOn(t, topic)[5] })
			// Stream rows: the same again, and an update into NaN.
			e.Exec(`INSERT INTO n VALUES (11, 1.5, 2.25, '{1}'), (12, '-Infinity', 1, '{1}'), (13, 1, 'NaN', '{1}'),
				(14, 1, 1, '{NaN}'), (15, 2, 2, '{2}')`)
			e.Exec(`UPDATE n SET a = 'NaN' WHERE k = 1`)
			e.Exec(`INSERT INTO nk VALUES ('Infinity', 3), (2, 4)`)
			e.Exec(`DELETE FROM nf WHERE k = 1`)
			e.Exec(`INSERT INTO n VALUES (16, 3, 3, '{3}')`)
			itest.WaitOrDump(t, p, 90*time.Second, "the stream's plain rows", func() bool { return keysOn(t, topic)[16] })
			if p.Exited() {
				t.Fatalf("the pipeline stopped:\n%s", p.Out)
			}
			if code := p.Stop(t); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, p.Out)
			}
			keys := keysOn(t, topic)
			skipped := map[string]string{}
			var keySkipped, fullSkipped []string
			for _, rs := range itest.ReadSkipped(t, e) {
				if rs.Table == "public.nf" {
					fullSkipped = append(fullSkipped, fmt.Sprint(rs.Extra["op"]))
					continue
				}
				if rs.Table == "public.nk" {
					keySkipped = append(keySkipped, rs.Reason)
					continue
				}
				skipped[fmt.Sprint(rs.PrimaryKey["k"])] = rs.Reason
			}
			wantKeyed, wantKeySkipped := 2, 2
			wantFull, wantFullSkipped := []string{"d", "tombstone"}, "r"
			if mode == "string" {
				wantKeyed, wantKeySkipped = 4, 0
				wantFull, wantFullSkipped = []string{"r", "d", "tombstone"}, ""
			}
			var full []string
			for _, m := range itest.ReadTopicIfAny(t, fullTopic) {
				if m.Value == nil {
					full = append(full, "tombstone")
				} else {
					full = append(full, fmt.Sprint(m.Payload()["op"]))
				}
			}
			if strings.Join(full, ",") != strings.Join(wantFull, ",") {
				t.Errorf("REPLICA IDENTITY FULL table: records %v, want %v (the delete and its tombstone published)", full, wantFull)
			}
			if got := strings.Join(fullSkipped, ","); got != wantFullSkipped {
				t.Errorf("REPLICA IDENTITY FULL table: rows skipped %q, want %q", got, wantFullSkipped)
			}
			if n := len(itest.ReadTopicIfAny(t, keyTopic)); n != wantKeyed {
				t.Errorf("numeric key table: %d messages, want %d", n, wantKeyed)
			}
			if len(keySkipped) != wantKeySkipped {
				t.Errorf("numeric key table: %d rows skipped, want %d: %q", len(keySkipped), wantKeySkipped, keySkipped)
			}
			for _, r := range keySkipped {
				if !strings.Contains(r, "its key") || !strings.Contains(r, `column "k"`) {
					t.Errorf("numeric key table: reason %q does not name the key column", r)
				}
			}
			special := []int{2, 3, 4, 12, 13, 14}
			for _, k := range special {
				switch mode {
				case "precise":
					if keys[k] {
						t.Errorf("row %d (a special value) published under decimal_handling precise", k)
					}
					r, ok := skipped[fmt.Sprint(k)]
					if !ok {
						t.Errorf("row %d (a special value): no row.skipped record (have %v)", k, skipped)
					} else if !strings.Contains(r, "NaN") || !strings.Contains(r, "decimal_handling") || !strings.Contains(r, `column "`) {
						t.Errorf("row %d: row.skipped reason %q names neither the column nor the fix", k, r)
					}
				case "string":
					if !keys[k] {
						t.Errorf("row %d (a special value) not published under decimal_handling string", k)
					}
				}
			}
			for _, k := range []int{1, 5, 11, 15, 16} {
				if !keys[k] {
					t.Errorf("plain row %d not published", k)
				}
			}
			if mode == "precise" {
				if _, ok := skipped["1"]; !ok {
					t.Errorf("the update of row 1 into NaN: no row.skipped record (have %v)", skipped)
				}
			} else if len(skipped) > 0 {
				t.Errorf("decimal_handling string: rows skipped: %v", skipped)
			}
		})
	}
}

// keysOn is the set of k values published on topic (key {"k": n}).
func keysOn(t *testing.T, topic string) map[int]bool {
	out := map[int]bool{}
	for _, m := range itest.ReadTopicIfAny(t, topic) {
		if k, ok := m.Key["payload"].(map[string]any)["k"].(float64); ok {
			out[int(k)] = true
		}
	}
	return out
}

// TestPGSpecialNumericOldRowOnly: under REPLICA IDENTITY FULL an update
// or a delete carries the old row, and a NaN or ±Infinity in it (a NOT
// NULL numeric) cannot be a Connect Decimal under decimal_handling
// precise. The change used to be skipped whole: an update's new row, a
// plain number, never reached the topic, and a delete left the row's
// last record there for good (delete_mode record sends no tombstone).
// Each is published with the old row of the default replica identity:
// none for an update, the key for a delete.
func TestPGSpecialNumericOldRowOnly(t *testing.T) {
	e := itest.NewEnv(t, "pgnanold")
	e.Exec(`CREATE TABLE f (k int PRIMARY KEY, a numeric NOT NULL)`)
	e.Exec(`ALTER TABLE f REPLICA IDENTITY FULL`)
	e.Exec(`INSERT INTO f VALUES (1, 'NaN'), (2, 2)`)
	topic := e.Prefix + ".public.f"
	p := e.Start("run", "--config", e.WritePipeline(itest.PipelineConfig{}))
	itest.WaitOrDump(t, p, 90*time.Second, "the snapshot's plain row", func() bool { return keysOn(t, topic)[2] })
	e.Exec(`UPDATE f SET a = 5 WHERE k = 1`)
	e.Exec(`UPDATE f SET a = 'Infinity' WHERE k = 2`) // skipped: the new row holds it
	e.Exec(`DELETE FROM f WHERE k = 2`)
	e.Exec(`INSERT INTO f VALUES (3, 3)`)
	itest.WaitOrDump(t, p, 90*time.Second, "the row after the update", func() bool { return keysOn(t, topic)[3] })
	if code := p.Stop(t); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, p.Out)
	}
	var last, last2 map[string]any
	for _, m := range itest.ReadTopicIfAny(t, topic) {
		switch k, _ := m.Key["payload"].(map[string]any)["k"].(float64); {
		case k == 1 && m.Value != nil:
			last = m.Payload()
		case k == 2 && m.Value != nil:
			last2 = m.Payload()
		}
	}
	if last2 == nil || last2["op"] != "d" {
		t.Errorf("row 2 updated to Infinity, then deleted: last record %v, want the delete", last2)
	} else if before, _ := last2["before"].(map[string]any); before == nil || before["k"] != float64(2) {
		t.Errorf("row 2's delete: before %v, want its key", last2["before"])
	}
	if last == nil || last["op"] != "u" {
		t.Fatalf("row 1 updated from NaN to 5: last record %v, want the update (its new row is a plain number)", last)
	}
	if last["before"] != nil {
		t.Errorf("row 1's update: before %v, want null (the old row holds NaN)", last["before"])
	}
	after, _ := last["after"].(map[string]any)
	if a, _ := after["a"].(map[string]any); a == nil || a["value"] != "BQ==" {
		t.Errorf("row 1's update: after %v, want a = 5", after)
	}
}
