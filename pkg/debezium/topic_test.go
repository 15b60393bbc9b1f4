package debezium

import (
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
		if got := topicName("p", tt.id); got != tt.want {
			t.Errorf("%s: topic %q, want %q", tt.name, got, tt.want)
		}
	}
}
