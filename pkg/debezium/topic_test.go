package debezium

import (
	"errors"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/change"
)

func TestTopicNamePerSourceKind(t *testing.T) {
	for _, tt := range []struct {
		name string
		id   change.TableID
		want string
	}{
		{"postgres", change.TableID{DB: "shop", Schema: "public", Name: "orders"}, "p.public.orders"},
		{"postgres unified across schemas", change.TableID{DB: "shop", Schema: change.Unified, Name: "orders"}, "p._.orders"},
		{"mysql", change.TableID{DB: "shop", Name: "orders"}, "p.shop.orders"},
		{"mongodb collection", change.TableID{DB: "shop", Name: "carts"}, "p.shop.carts"},
		{"sqlserver", change.TableID{DB: "shop", Schema: "dbo", Name: "orders", DBInTopic: true}, "p.shop.dbo.orders"},
		{"sqlserver unified across databases", change.TableID{Schema: "dbo", Name: "orders", DBInTopic: true}, "p.dbo.orders"},
		{"characters Kafka refuses", change.TableID{Schema: "public", Name: "ordèrs$"}, "p.public.ord_rs_"},
	} {
		if got := tt.id.Topic("p"); got != tt.want {
			t.Errorf("%s: topic %q, want %q", tt.name, got, tt.want)
		}
	}
}

// Two different tables never share a topic: names that sanitize alike,
// and names Kafka treats as one ('.' and '_' collide), are refused with an
// error naming both tables, both topics and the fix; the table seen
// first keeps its topic, and the same table (another version of its
// shape) is not a collision.
func TestTopicCollisionRefused(t *testing.T) {
	pg := func(schema, name string) *change.Table {
		return &change.Table{ID: change.TableID{DB: "shop", Schema: schema, Name: name},
			Columns: []change.Column{{Name: "id", Type: change.Type{Kind: change.KindInt32}}}, Key: []int{0}}
	}
	for _, tt := range []struct {
		name          string
		first, second *change.Table
		want          []string
	}{
		{"space and underscore", pg("public", "my table"), pg("public", "my_table"),
			[]string{`'public.my table'`, `'public.my_table'`, "topic p.public.my_table", "source.tables"}},
		{"two CJK names", pg("public", "表"), pg("public", "桌"),
			[]string{`'public.表'`, `'public.桌'`, "topic p.public._", "source.tables"}},
		{"dot and underscore", pg("a", "b_c"), pg("a_b", "c"),
			[]string{`'a.b_c'`, `'a_b.c'`, "p.a.b_c and p.a_b.c", "Kafka treats as the same topic"}},
		{"mysql", &change.Table{ID: change.TableID{DB: "shop", Name: "my%table"}}, &change.Table{ID: change.TableID{DB: "shop", Name: "my$table"}},
			[]string{`'shop.my%table'`, `'shop.my$table'`}},
	} {
		e := NewEncoder(Options{TopicPrefix: "p"})
		first, err := e.TableTopic(tt.first)
		if err != nil {
			t.Fatalf("%s: first table refused: %v", tt.name, err)
		}
		second, err := e.TableTopic(tt.second)
		var ce *TopicCollisionError
		if !errors.As(err, &ce) {
			t.Errorf("%s: second table gets topic %q (first %q), err %v; want a *TopicCollisionError", tt.name, second, first, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error does not say %s: %v", tt.name, w, err)
			}
		}
		// Nothing of the second table can be encoded either.
		ev := &change.Event{Table: tt.second, Op: change.OpCreate, After: change.Row{change.IntValue(1)}}
		if _, _, err := e.AppendKey(nil, ev); !errors.As(err, &ce) {
			t.Errorf("%s: AppendKey of the refused table: %v", tt.name, err)
		}
		// The first table still publishes, also in a new version.
		v2 := *tt.first
		v2.Version++
		if got, err := e.TableTopic(&v2); err != nil || got != first {
			t.Errorf("%s: new version of the first table: %q, %v; want %q", tt.name, got, err, first)
		}
		// The start-up check on configured tables says the same.
		e = NewEncoder(Options{TopicPrefix: "p"})
		if _, err := e.ClaimTopic(tt.first.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.ClaimTopic(tt.second.ID); !errors.As(err, &ce) {
			t.Errorf("%s: ClaimTopic of the second table: %v", tt.name, err)
		}
	}
}
