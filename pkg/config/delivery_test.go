package config

import (
	"strings"
	"testing"
)

func TestDeliveryValidation(t *testing.T) {
	base := func() *Config {
		c := &Config{Name: "shop", Source: Source{Type: SourcePostgres, URL: "postgres://u@h/db"},
			Destination: Destination{BootstrapServers: "b:9092", TopicPrefix: "shop"}}
		c.ApplyDefaults()
		return c
	}
	c := base()
	if c.Delivery != DeliveryAtLeastOnce || c.ExactlyOnce() {
		t.Fatalf("default delivery %q", c.Delivery)
	}
	c.Delivery = DeliveryExactlyOnce
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.OffsetsTopic(); got != "shop.tributary-offsets" {
		t.Errorf("offsets topic %q", got)
	}
	if got := c.TransactionalID(); got != "shop.tributary-shop" {
		t.Errorf("transactional id %q", got)
	}
	for name, tc := range map[string]struct {
		set  func(*Config)
		want string
	}{
		"delivery":       {func(c *Config) { c.Delivery = "exactly-once" }, `delivery: must be at_least_once or exactly_once, not "exactly-once"`},
		"max_records":    {func(c *Config) { c.Transactions.MaxRecords = -1 }, "transactions.max_records: must be at least 1, not -1"},
		"max_interval":   {func(c *Config) { c.Transactions.MaxInterval = "soon" }, `transactions.max_interval: "soon" is not a duration`},
		"interval range": {func(c *Config) { c.Transactions.MaxInterval = "1m" }, "transactions.max_interval: 1m is out of range"},
		"offsets topic":  {func(c *Config) { c.Transactions.OffsetsTopic = "a/b" }, `transactions.offsets_topic: "a/b" is not a valid topic name`},
		"no prefix":      {func(c *Config) { c.Delivery = DeliveryExactlyOnce; c.Destination.TopicPrefix = "" }, "transactions.offsets_topic: required with delivery exactly_once"},
	} {
		cfg := base()
		tc.set(cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}
