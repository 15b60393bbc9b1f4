package source_test

import (
	"testing"

	_ "github.com/tributary-cdc/tributary/pkg/capture" // the source types' rules
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestOptionsForLogicalName: the source's logical name (source.name in
// every message) is destination.topic_prefix, or the pipeline's name with
// destination.topic.
func TestOptionsForLogicalName(t *testing.T) {
	for _, c := range []struct{ dest, want string }{
		{"topic_prefix: shop.eu", "shop.eu"},
		{"topic: shop.changes", "shop"},
	} {
		cfg, err := config.Parse([]byte("name: shop\nsource: {type: postgres, url: 'postgres://u@db/shop'}\n" +
			"destination: {bootstrap_servers: 'k:9092', " + c.dest + ", key_columns: {public.orders: [id]}}\n"))
		if err != nil {
			t.Fatal(err)
		}
		o := source.OptionsFor(cfg)
		if o.TopicPrefix != c.want || o.Pipeline != "shop" || o.Config.URL != cfg.Source.URL || len(o.KeyColumns["public.orders"]) != 1 {
			t.Errorf("%s: options %+v", c.dest, o)
		}
	}
}
