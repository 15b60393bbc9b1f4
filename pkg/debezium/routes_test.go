package debezium

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium/route"
)

func mustRename(t *testing.T, regex, repl string) *route.Rename {
	t.Helper()
	r, err := route.NewRename(regex, repl)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRerouteKeyAndNames: ByLogicalTableRouter's topic, its key with the
// physical table's field last (schema and payload, with and without
// schemas) and the schema names after the new topic.
func TestRerouteKeyAndNames(t *testing.T) {
	routes := &route.Routes{Logical: &route.Logical{Topic: mustRename(t, `(.*)\.custom(.*)`, `$1.all`),
		EnforceUniqueness: true, KeyFieldName: route.DefaultKeyFieldName}}
	e := NewEncoder(Options{TopicPrefix: "dbserver1", Routes: routes})
	ev := goldenUpdateEvent()
	if topic, err := e.TableTopic(ev.Table); err != nil || topic != "dbserver1.inventory.all" {
		t.Fatalf("topic %q %v", topic, err)
	}
	key, ok, err := e.AppendKey(nil, ev)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},{"type":"string","optional":false,"field":"__dbz__physicalTableIdentifier"}],"optional":false,"name":"dbserver1.inventory.all.Key"},"payload":{"id":1006,"__dbz__physicalTableIdentifier":"dbserver1.inventory.customers"}}`
	if string(key) != want {
		t.Errorf("key\n%s\nwant\n%s", key, want)
	}
	value, err := e.AppendValue(nil, ev, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{`"name":"dbserver1.inventory.all.Value"`, `"name":"dbserver1.inventory.all.Envelope"`} {
		if !strings.Contains(string(value), name) {
			t.Errorf("value lacks %s: %s", name, value)
		}
	}
	if strings.Contains(string(value), "inventory.customers.") {
		t.Errorf("value keeps a schema name of the table: %s", value)
	}

	routes.Logical.KeyFieldName = "shard"
	routes.Logical.KeyField = mustRename(t, `.*\.(\w+)`, `t-$1`)
	e = NewEncoder(Options{TopicPrefix: "dbserver1", Routes: routes, Format: Format{NoSchemas: true}})
	key, _, err = e.AppendKey(nil, goldenUpdateEvent())
	if err != nil || string(key) != `{"id":1006,"shard":"t-customers"}` {
		t.Errorf("key without schemas %s %v", key, err)
	}
}

// TestRegexRouterTopicOnly: RegexRouter renames the topic; keys, values
// and schema names stay the table's. Tables it leaves alone keep theirs.
func TestRegexRouterTopicOnly(t *testing.T) {
	plain := NewEncoder(Options{TopicPrefix: "dbserver1"})
	e := NewEncoder(Options{TopicPrefix: "dbserver1", Routes: &route.Routes{Regex: mustRename(t, `dbserver1\.(.*)`, `cdc.$1`)}})
	ev := goldenUpdateEvent()
	if topic, err := e.TableTopic(ev.Table); err != nil || topic != "cdc.inventory.customers" {
		t.Fatalf("topic %q %v", topic, err)
	}
	k1, _, _ := plain.AppendKey(nil, ev)
	k2, _, _ := e.AppendKey(nil, ev)
	v1, _ := plain.AppendValue(nil, ev, 1)
	v2, _ := e.AppendValue(nil, ev, 1)
	if string(k1) != string(k2) || string(v1) != string(v2) {
		t.Errorf("RegexRouter changed a record:\n%s\n%s", k2, v2)
	}
}

// TestRouteRefusals: a topic Kafka does not allow, or a key field the key
// already has, refuses the table with the setting to fix.
func TestRouteRefusals(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "dbserver1", Routes: &route.Routes{Regex: mustRename(t, `(.*)`, `bad topic $1`)}})
	if _, err := e.TableTopic(customers()); err == nil || !strings.Contains(err.Error(), `"bad topic dbserver1.inventory.customers", which Kafka does not allow`) {
		t.Errorf("bad topic: %v", err)
	}
	e = NewEncoder(Options{TopicPrefix: "dbserver1", Routes: &route.Routes{Logical: &route.Logical{Topic: mustRename(t, `.*`, `all`),
		EnforceUniqueness: true, KeyFieldName: "id"}}})
	if _, _, err := e.AppendKey(nil, goldenUpdateEvent()); err == nil || !strings.Contains(err.Error(), "set transforms.reroute.key_field_name") {
		t.Errorf("key field clash: %v", err)
	}
	// Two tables merged by configuration are no collision.
	e = NewEncoder(Options{TopicPrefix: "dbserver1", Routes: &route.Routes{Logical: &route.Logical{Topic: mustRename(t, `.*`, `all`)}}})
	b := customers()
	b.ID = change.TableID{DB: "postgres", Schema: "inventory", Name: "orders"}
	for _, tb := range []*change.Table{customers(), b} {
		if topic, err := e.TableTopic(tb); err != nil || topic != "all" {
			t.Errorf("merged: %q %v", topic, err)
		}
	}
}

// BenchmarkEncode10ColRerouted is BenchmarkEncode10Col for a table that
// ByLogicalTableRouter sends elsewhere: the key's added field is
// precomputed with its schema, so a routed row costs no allocation either.
func BenchmarkEncode10ColRerouted(b *testing.B) {
	r, err := route.NewRename(`(.*)\.orders`, `$1.all`)
	if err != nil {
		b.Fatal(err)
	}
	e := NewEncoder(Options{TopicPrefix: "shop", Routes: &route.Routes{Logical: &route.Logical{Topic: r, EnforceUniqueness: true, KeyFieldName: route.DefaultKeyFieldName}}})
	ev := benchEvent()
	if topic, _ := e.TableTopic(ev.Table); topic == e.prefix+"."+ev.Table.ID.Schema+"."+ev.Table.ID.Name {
		b.Fatalf("not routed: %s", topic)
	}
	var kbuf, vbuf []byte
	b.ReportAllocs()
	for b.Loop() {
		kbuf, _, err = e.AppendKey(kbuf[:0], ev)
		if err != nil {
			b.Fatal(err)
		}
		vbuf, err = e.AppendValue(vbuf[:0], ev, 1_700_000_001_000_000)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(kbuf) + len(vbuf)))
}
