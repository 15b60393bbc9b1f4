package config

import (
	"slices"
	"strings"
	"testing"
	"time"
)

const sinkYAML = `
name: shop
source:
  type: postgres
  url: postgres://u@db/shop
  tables: [public.orders, public.items]
destination:
  bootstrap_servers: 127.0.0.1:9092
  topic: shop.changes
  key_columns:
    public.orders: [customer_id, id]
  partition_column:
    public.items: shard
  publish_timeout: 2m
  max_in_flight: 4096
  max_in_flight_bytes: 67108864
  max_message_bytes: 20971520
  client_id: shop-cdc
`

func TestSinkSettingsParse(t *testing.T) {
	cfg := mustParse(t, sinkYAML)
	d := cfg.Destination
	if d.Topic != "shop.changes" || !slices.Equal(d.KeyColumns["public.orders"], []string{"customer_id", "id"}) || d.PartitionColumn["public.items"] != "shard" {
		t.Fatalf("parsed %+v", d)
	}
	if d.PublishTimeoutDuration() != 2*time.Minute || d.InFlightRecords() != 4096 || d.InFlightBytes() != 64<<20 || cfg.ClientID() != "shop-cdc" {
		t.Fatalf("effective values %v %d %d %s", d.PublishTimeoutDuration(), d.InFlightRecords(), d.InFlightBytes(), cfg.ClientID())
	}
	// With topic and no prefix, the logical name (source.name, schema
	// names) is the pipeline's name.
	if cfg.LogicalName() != "shop" {
		t.Fatalf("logical name %q", cfg.LogicalName())
	}
}

func TestSinkSettingsDefaults(t *testing.T) {
	cfg := validConfig(t)
	d := cfg.Destination
	if d.PublishTimeoutDuration() != 30*time.Second || d.InFlightRecords() != DefaultMaxInFlight || d.InFlightBytes() != 16<<20 || cfg.ClientID() != "tributary-shop-eu" || cfg.LogicalName() != "shop" {
		t.Fatalf("defaults %v %d %d %s %s", d.PublishTimeoutDuration(), d.InFlightRecords(), d.InFlightBytes(), cfg.ClientID(), cfg.LogicalName())
	}
	// A limit over 16 MiB raises the default buffer with it.
	d.MaxMessageBytes = 20 << 20
	if d.InFlightBytes() != 20<<20 {
		t.Fatalf("in-flight bytes %d for a 20 MiB limit", d.InFlightBytes())
	}
}

// TestSinkSettingsRules: every bad setting is reported at once, each
// naming its field (validate exits 2 with the list).
func TestSinkSettingsRules(t *testing.T) {
	doc := strings.NewReplacer(
		"  topic: shop.changes\n", "  topic: shop changes\n  topic_prefix: shop\n",
		"[customer_id, id]", "[id, id, \"\"]",
		"public.items: shard", "public.missing: shard",
		"2m", "500ms",
		"max_in_flight: 4096", "max_in_flight: 70000",
		"max_in_flight_bytes: 67108864", "max_in_flight_bytes: 1048576",
		"client_id: shop-cdc", "client_id: shop cdc",
	).Replace(sinkYAML)
	wantProblems(t, doc, []string{
		"destination.topic",
		"destination.key_columns[public.orders][1]",
		"destination.key_columns[public.orders][2]",
		"destination.partition_column[public.missing]",
		"destination.publish_timeout",
		"destination.max_in_flight",
		"destination.max_message_bytes",
		"destination.client_id",
	}, []string{"not allowed with destination.topic_prefix", "repeats destination.key_columns[public.orders][0]", "not in source.tables",
		"from 1s to 1h", "from 1 to 65536", "does not fit in destination.max_in_flight_bytes"})
}

func TestSinkSettingsTopicOrPrefix(t *testing.T) {
	doc := strings.Replace(sinkYAML, "  topic: shop.changes\n", "", 1)
	_, err := parse([]byte(doc), testEnv)
	if got := fields(t, err); !slices.Contains(got, "destination.topic_prefix") || !strings.Contains(err.Error(), "or destination.topic") {
		t.Fatalf("neither topic nor topic_prefix: %v", err)
	}
	doc = strings.Replace(sinkYAML, "key_columns:\n    public.orders: [customer_id, id]", "key_columns: [id]", 1)
	_, err = parse([]byte(doc), testEnv)
	if got := fields(t, err); !slices.Contains(got, "destination.key_columns") {
		t.Fatalf("a list for key_columns: %v", err)
	}
}

// TestKeyColumnsNotMaskedOrExcluded: a key column that the column rules
// mask or leave out is refused, naming the column and the rule.
func TestKeyColumnsNotMaskedOrExcluded(t *testing.T) {
	doc := strings.Replace(sinkYAML, "  tables: [public.orders, public.items]\n",
		"  tables: [public.orders, public.items]\n  exclude_columns: ['public\\.orders\\.id']\n  mask_columns: [{columns: ['.*\\.CUSTOMER_ID'], chars: 3}]\n", 1)
	_, err := parse([]byte(doc), testEnv)
	got := fields(t, err)
	if !slices.Contains(got, "destination.key_columns[public.orders][0]") || !slices.Contains(got, "destination.key_columns[public.orders][1]") ||
		!strings.Contains(err.Error(), "public.orders.customer_id is masked by source.mask_columns") ||
		!strings.Contains(err.Error(), "public.orders.id is left out by source.exclude_columns") {
		t.Fatalf("masked and excluded key columns: %v", err)
	}
}
