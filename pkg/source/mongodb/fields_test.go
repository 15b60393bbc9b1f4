package mongodb

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// fieldsOracle is the connector's field.exclude.list and field.renames the
// stored outputs testdata/oracle-fields-*.debezium were written with
// (MongoHarness "p" connector.field.exclude.list=… connector.field.renames=…).
var (
	fieldsExclude = []string{"shop.orders.secret", "shop.orders.a.b.c", "shop.ord*.items.price"}
	fieldsRenames = []string{"shop.orders.name:title", "shop.orders.sub.old:new", "shop.orders.items.sku:code", "shop.orders.clash:n"}
)

// With source.exclude_columns (field.exclude.list) and
// source.rename_fields (field.renames), every input of
// testdata/oracle-fields.jsonl is byte for byte what Debezium 3.6.1's
// connector writes: fields left out or renamed in documents, through
// sub-documents and arrays of documents, in an update's updatedFields
// (dotted paths, and documents under them), removedFields and
// truncatedArrays; a rename onto an existing field, or a truncated array
// whose field is excluded, fails in both. Also with format.unwrap.
func TestFieldSelectorMatchesDebeziumOracle(t *testing.T) {
	sel, err := NewFieldSelector(fieldsExclude, fieldsRenames)
	if err != nil {
		t.Fatal(err)
	}
	ins := oracleInputs(t, "testdata/oracle-fields.jsonl")
	for _, c := range []struct {
		name   string
		opt    MessageOptions
		failed int // inputs the connector (and transform) fail on
	}{
		// A rename onto an existing field; a truncated array whose field
		// is excluded.
		{"envelope", MessageOptions{Schemas: true}, 2},
		// And the first document's array mixing documents and numbers.
		{"unwrap", MessageOptions{Schemas: true, Unwrap: &UnwrapOptions{}}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			data, err := os.ReadFile("testdata/oracle-fields-" + c.name + ".debezium")
			if err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(bytes.NewReader(data))
			sc.Buffer(nil, 1<<20)
			c.opt.Fields = sel
			failed := 0
			for i, in := range ins {
				var lines [2]string
				for j := range lines {
					if !sc.Scan() {
						t.Fatalf("oracle output ends before input %d", i+1)
					}
					lines[j] = sc.Text()
				}
				m, err := encodeOracle(in, c.opt)
				if strings.HasPrefix(lines[0], "<error>") {
					failed++
					if err == nil {
						t.Errorf("input %d: no error; Debezium: %s", i+1, lines[0])
					}
					continue
				}
				if c.opt.Unwrap != nil {
					if _, ok := unwrapCompare(m, err, lines[0], lines[1]); !ok {
						t.Errorf("input %d:\n got %s\n     %s (err %v)\nwant %s\n     %s", i+1, m.Key, m.Value, err, lines[0], lines[1])
					}
					continue
				}
				if err != nil || string(m.Key) != lines[0] || string(m.Value) != lines[1] {
					t.Errorf("input %d:\n got %s\n     %s (err %v)\nwant %s\n     %s", i+1, m.Key, m.Value, err, lines[0], lines[1])
				}
			}
			if failed != c.failed {
				t.Errorf("%d inputs failed in Debezium; want %d", failed, c.failed)
			}
		})
	}
}

// Bad entries are reported each, with their list and index.
func TestFieldSelectorRules(t *testing.T) {
	_, err := NewFieldSelector([]string{"shop.orders", "shop..x", "shop.orders.ok"}, []string{"shop.orders.a", "shop.orders.a:b:c", "shop.orders.a:b"})
	for _, want := range []string{
		`field.exclude.list entry 1: "shop.orders": must be <database>.<collection>.<field path>`,
		`field.exclude.list entry 2: "shop..x"`,
		`field.renames entry 1: "shop.orders.a": must be <database>.<collection>.<field path>:<new name>`,
		`field.renames entry 2: "shop.orders.a:b:c"`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no %q in %v", want, err)
		}
	}
	if err != nil && strings.Contains(err.Error(), "entry 3") {
		t.Errorf("a good entry reported: %v", err)
	}
	sel, _ := NewFieldSelector(nil, []string{"shop.orders.clash:n"})
	_, err = sel.For("shop", "orders").Document(mustDoc(t, bson.D{{Key: "clash", Value: 1}, {Key: "n", Value: 2}}))
	if !errors.Is(err, ErrFieldExists) {
		t.Errorf("rename onto an existing field: %v", err)
	}
}
