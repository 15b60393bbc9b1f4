package debezium

import (
	"errors"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

// TestKeyColumns: destination.key_columns replaces the primary key in the
// key payload and the key schema, in the configured order; a column the
// table does not have is an error naming it.
func TestKeyColumns(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "dbserver1", KeyColumns: map[string][]string{"inventory.customers": {"email", "id"}}})
	ev := goldenUpdateEvent()
	key, ok, err := e.AppendKey(nil, ev)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := `{"schema":{"type":"struct","fields":[{"type":"string","optional":false,"field":"email"},{"type":"int32","optional":false,"field":"id"}],"optional":false,"name":"dbserver1.inventory.customers.Key"},"payload":{"email":"liam3@example.com","id":1006}}`
	if string(key) != want {
		t.Fatalf("key\n%s\nwant\n%s", key, want)
	}

	e = NewEncoder(Options{TopicPrefix: "dbserver1", KeyColumns: map[string][]string{"inventory.customers": {"region"}}})
	_, _, err = e.AppendKey(nil, goldenUpdateEvent())
	var ee *EncodeError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "destination.key_columns names column region, which the table does not have") {
		t.Fatalf("unknown key column: %v", err)
	}
}

// TestFixedTopic: with destination.topic every table publishes to the one
// topic, without a collision error, while schema names keep the logical
// name and the table.
func TestFixedTopic(t *testing.T) {
	e := NewEncoder(Options{TopicPrefix: "shop", Topic: "shop.changes"})
	a := customers()
	b := customers()
	b.ID = change.TableID{DB: "postgres", Schema: "inventory", Name: "orders"}
	for _, tb := range []*change.Table{a, b} {
		topic, err := e.TableTopic(tb)
		if err != nil || topic != "shop.changes" {
			t.Fatalf("topic %q, %v", topic, err)
		}
	}
	ev := goldenUpdateEvent()
	key, _, err := e.AppendKey(nil, ev)
	if err != nil || !strings.Contains(string(key), `"name":"shop.inventory.customers.Key"`) {
		t.Fatalf("key schema name: %s %v", key, err)
	}
}
