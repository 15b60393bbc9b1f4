package scenario_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"
)

// The routing transforms (docs/configuration.md, "transforms") side by
// side with real Debezium: ByLogicalTableRouter merging two shards whose
// rows share primary keys into one topic, and RegexRouter renaming a
// third table's topic, in the order transforms=reroute,route; the same
// topics, and each topic's streamed records equal byte for byte (key,
// value, tombstones) but for the fields formatVolatile masks.

// routeSource is what the routing comparison needs of a database.
type routeSource struct {
	exec func(sql string)
	// create is a CREATE TABLE with %s the table; every table has an int
	// primary key id and a text column v.
	create string
	// shards are the tables reroute merges, other the one route renames.
	shards [2]string
	other  string
	// debezium starts Debezium on the tables with the extra properties.
	debezium func(out string, max int, tables []string, extra []string) *itest.DebeziumProc
	// pipeline writes Tributary's config of the tables with top (the
	// transforms section) at the top level.
	pipeline func(tables []string, top string) string
	// merged and renamed are the topics the transforms lead to.
	merged, renamed string
	// start runs Tributary.
	start func(args ...string) *itest.Proc
}

// routeTransforms is one configuration of the two transforms on both
// sides.
type routeTransforms struct {
	tributary string   // the transforms section's lines
	debezium  []string // transforms.* properties
	// firstKey is the key of the first shard's insert on the merged
	// topic: its id and the field the router adds.
	firstKey string
	// format is Tributary's format section's lines, if any.
	format string
	// records are the records of the merged and of the renamed topic
	// (snapshot rows included); zero: the envelope's 7 and 5.
	records [2]int
}

func runRouteOracle(t *testing.T, src routeSource, tr routeTransforms) {
	t.Helper()
	tables := []string{src.shards[0], src.shards[1], src.other}
	for _, tb := range tables {
		src.exec(fmt.Sprintf(src.create, tb))
		src.exec(fmt.Sprintf(`INSERT INTO %s VALUES (1, 'snap')`, tb))
	}
	itest.CreateSinglePartitionTopics(t, src.merged, src.renamed)
	stream := []string{
		// The same primary key in both shards: two keys on the merged topic.
		fmt.Sprintf(`INSERT INTO %s VALUES (2, 'a')`, src.shards[0]),
		fmt.Sprintf(`INSERT INTO %s VALUES (2, 'b')`, src.shards[1]),
		fmt.Sprintf(`UPDATE %s SET v = 'c' WHERE id = 2`, src.shards[0]),
		fmt.Sprintf(`DELETE FROM %s WHERE id = 2`, src.shards[1]), // a delete and its tombstone
		fmt.Sprintf(`INSERT INTO %s VALUES (2, 'x')`, src.other),
		fmt.Sprintf(`UPDATE %s SET id = 3 WHERE id = 2`, src.other), // a key change: delete, tombstone, create
	}
	want := map[string]int{src.merged: 2 + 5, src.renamed: 1 + 4}
	if tr.records[0] > 0 {
		want = map[string]int{src.merged: tr.records[0], src.renamed: tr.records[1]}
	}
	max := want[src.merged] + want[src.renamed]

	out := filepath.Join(t.TempDir(), "debezium.jsonl")
	dbz := src.debezium(out, max, tables, tr.debezium)
	top := "transforms:\n" + tr.tributary
	if tr.format != "" {
		top += "format:\n" + tr.format
	}
	p := src.start("run", "--config", src.pipeline(tables, top))
	itest.WaitFor(t, 120*time.Second, "every snapshot row", func() bool {
		if dbz.Exited() {
			t.Fatalf("debezium exited early:\n%s", dbz.Out)
		}
		return itest.CountLines(out) >= 3 && itest.TopicEnd(src.merged) >= 2 && itest.TopicEnd(src.renamed) >= 1
	})
	for _, sql := range stream {
		src.exec(sql)
	}
	itest.WaitFor(t, 180*time.Second, "every record on both sides", func() bool {
		written := debeziumWritten(out)
		for topic, n := range want {
			if written[topic] < n || itest.TopicEnd(topic) < int64(n) {
				return false
			}
		}
		return true
	})
	if code := p.Stop(t); code != 0 {
		t.Errorf("tributary exit code %d after SIGTERM; output:\n%s", code, p.Out)
	}
	dbz.Stop()
	d := readDebeziumRaw(t, out)
	if len(d) != len(want) {
		var got []string
		for topic := range d {
			got = append(got, topic)
		}
		t.Errorf("Debezium wrote to topics %v, want %s and %s", got, src.merged, src.renamed)
	}
	compared := 0
	for topic, n := range want {
		// The snapshot rows are each side's own (source block, order):
		// only the streamed records are compared, in order.
		ds, ts := streamed(d[topic]), streamed(readTopicBytes(t, topic))
		if len(d[topic]) != n || len(ds) != len(ts) {
			t.Errorf("%s: Debezium %d records (%d streamed), Tributary's streamed %d; want %d in all", topic, len(d[topic]), len(ds), len(ts), n)
		}
		for i := 0; i < len(ds) && i < len(ts); i++ {
			compared++
			dk, tk := maskFormatVolatile(ds[i].key), maskFormatVolatile(ts[i].key)
			var dv, tv []byte
			if ds[i].value != nil {
				dv = maskFormatVolatile(ds[i].value)
			}
			if ts[i].value != nil {
				tv = maskFormatVolatile(ts[i].value)
			}
			if !bytes.Equal(dk, tk) || !bytes.Equal(dv, tv) || (dv == nil) != (tv == nil) {
				t.Errorf("%s record %d differs:\n  debezium:  %s\n  tributary: %s", topic, i, rawKV{key: dk, value: dv}, rawKV{key: tk, value: tv})
			}
		}
	}
	if ts := streamed(readTopicBytes(t, src.merged)); len(ts) == 0 || !bytes.Contains(ts[0].key, []byte(tr.firstKey)) {
		t.Errorf("%s: the first streamed key is not the first shard's with its table (%s)", src.merged, tr.firstKey)
	}
	t.Logf("compared %d records byte for byte", compared)
}

// streamed are the records of rs that are not snapshot reads (the
// envelope's op r, or the unwrapped row of the snapshot, 'snap').
func streamed(rs []rawKV) []rawKV {
	var out []rawKV
	for _, r := range rs {
		if !bytes.Contains(r.value, []byte(`"op":"r"`)) && !bytes.Contains(r.value, []byte(`"v":"snap"`)) {
			out = append(out, r)
		}
	}
	return out
}

// postgresRouteSource is a routeSource of e's database: shards and other
// in the public schema, merged and renamed the topics they go to.
func postgresRouteSource(t *testing.T, e *itest.Env, shards [2]string, other, merged, renamed string) routeSource {
	return routeSource{
		exec:   func(sql string) { e.Exec(sql) },
		create: `CREATE TABLE %s (id int PRIMARY KEY, v text)`,
		shards: shards,
		other:  other,
		debezium: func(out string, max int, tables []string, extra []string) *itest.DebeziumProc {
			extra = append(extra, "table.include.list="+tableList("public", tables))
			return itest.StartDebezium(t, e, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(tables []string, top string) string {
			var ids []string
			for _, tb := range tables {
				ids = append(ids, "public."+tb)
			}
			return e.WritePipeline(itest.PipelineConfig{Source: "  tables: [" + strings.Join(ids, ", ") + "]\n  snapshot_parallelism: 1\n",
				Destination: "  delete_mode: record_and_tombstone\n", Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + top})
		},
		start:   e.Start,
		merged:  e.Prefix + ".public." + merged,
		renamed: e.Prefix + ".public." + renamed,
	}
}

// TestRouteOraclePostgres: ByLogicalTableRouter with its defaults (the
// key gains __dbz__physicalTableIdentifier, the shard's topic) and
// RegexRouter, against Debezium's PostgreSQL connector.
func TestRouteOraclePostgres(t *testing.T) {
	e := itest.NewEnv(t, "routepg")
	src := postgresRouteSource(t, e, [2]string{"ro_1", "ro_2"}, "rx_a", "ro_all", "renamed_a")
	runRouteOracle(t, src, routeTransforms{
		tributary: "  reroute:\n    topic_regex: '(.*)\\.ro_\\d+'\n    topic_replacement: '$1.ro_all'\n" +
			"  route:\n    regex: '(.*)\\.rx_(.*)'\n    replacement: '$1.renamed_$2'\n",
		debezium: []string{"transforms=reroute,route",
			"transforms.reroute.type=io.debezium.transforms.ByLogicalTableRouter",
			`transforms.reroute.topic.regex=(.*)\\.ro_\\d+`,
			"transforms.reroute.topic.replacement=$1.ro_all",
			"transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter",
			`transforms.route.regex=(.*)\\.rx_(.*)`,
			"transforms.route.replacement=$1.renamed_$2"},
		firstKey: `"payload":{"id":2,"__dbz__physicalTableIdentifier":"` + e.Prefix + `.public.ro_1"}}`,
	})
}

// TestRouteOracleUnwrapPostgres: format.unwrap with the routers is
// Debezium's transforms=reroute,route,unwrap: the row's schema is named
// after the merged topic; key_enforce_uniqueness false leaves the keys
// alone but for their name.
func TestRouteOracleUnwrapPostgres(t *testing.T) {
	e := itest.NewEnv(t, "routeuw")
	src := postgresRouteSource(t, e, [2]string{"uo_1", "uo_2"}, "ux_a", "uo_all", "unwrapped_a")
	runRouteOracle(t, src, routeTransforms{
		tributary: "  reroute:\n    topic_regex: '(.*)\\.uo_\\d+'\n    topic_replacement: '$1.uo_all'\n    key_enforce_uniqueness: false\n" +
			"  route:\n    regex: '(.*)\\.ux_(.*)'\n    replacement: '$1.unwrapped_$2'\n",
		format: "  unwrap: true\n  delete_handling: rewrite\n  add_fields: [op, table]\n",
		debezium: []string{"transforms=reroute,route,unwrap",
			"transforms.reroute.type=io.debezium.transforms.ByLogicalTableRouter",
			`transforms.reroute.topic.regex=(.*)\\.uo_\\d+`,
			"transforms.reroute.topic.replacement=$1.uo_all",
			"transforms.reroute.key.enforce.uniqueness=false",
			"transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter",
			`transforms.route.regex=(.*)\\.ux_(.*)`,
			"transforms.route.replacement=$1.unwrapped_$2",
			"transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState",
			"transforms.unwrap.delete.tombstone.handling.mode=rewrite",
			"transforms.unwrap.add.fields=op,table"},
		firstKey: `"name":"` + e.Prefix + `.public.uo_all.Key"},"payload":{"id":2}}`,
		// rewrite: a delete is one record, no tombstone.
		records: [2]int{2 + 4, 1 + 3},
	})
}

// TestRouteOracleMySQL: ByLogicalTableRouter with a key field of its own
// name and value (key.field.name, key.field.regex, key.field.replacement)
// and RegexRouter, against Debezium's MariaDB connector.
func TestRouteOracleMySQL(t *testing.T) {
	e := itest.NewMyEnv(t, "routemy")
	src := routeSource{
		exec:   func(sql string) { e.Exec(sql) },
		create: `CREATE TABLE %s (id INT PRIMARY KEY, v VARCHAR(20))`,
		shards: [2]string{"mo_1", "mo_2"},
		other:  "mx_a",
		debezium: func(out string, max int, _ []string, extra []string) *itest.DebeziumProc {
			return itest.StartMariaDBDebezium(t, e, out, max, strings.Join(extra, "\n")+"\n")
		},
		pipeline: func(tables []string, top string) string {
			var ids []string
			for _, tb := range tables {
				ids = append(ids, e.DB+"."+tb)
			}
			return e.Env.WritePipeline(itest.PipelineConfig{Typ: "mysql", URL: e.URL(), Source: "  tables: [" + strings.Join(ids, ", ") + "]\n  snapshot_parallelism: 1\n",
				Destination: "  delete_mode: record_and_tombstone\n", Checkpoint: "  path: " + filepath.Join(e.Dir, "checkpoints") + "\n" + top})
		},
		start:   e.Env.Start,
		merged:  e.Prefix + "." + e.DB + ".mo_all",
		renamed: e.Prefix + "." + e.DB + ".moved_a",
	}
	runRouteOracle(t, src, routeTransforms{
		tributary: "  reroute:\n    topic_regex: '(?<head>.*)\\.mo_\\d+'\n    topic_replacement: '${head}.mo_all'\n" +
			"    key_field_name: shard\n    key_field_regex: '.*\\.mo_(\\d+)'\n    key_field_replacement: 'shard-$1'\n" +
			"  route:\n    regex: '(.*)\\.mx_(.*)'\n    replacement: '$1.moved_$2'\n",
		debezium: []string{"transforms=reroute,route",
			"transforms.reroute.type=io.debezium.transforms.ByLogicalTableRouter",
			`transforms.reroute.topic.regex=(?<head>.*)\\.mo_\\d+`,
			"transforms.reroute.topic.replacement=${head}.mo_all",
			"transforms.reroute.key.field.name=shard",
			`transforms.reroute.key.field.regex=.*\\.mo_(\\d+)`,
			"transforms.reroute.key.field.replacement=shard-$1",
			"transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter",
			`transforms.route.regex=(.*)\\.mx_(.*)`,
			"transforms.route.replacement=$1.moved_$2"},
		firstKey: `"payload":{"id":2,"shard":"shard-1"}}`,
	})
}
