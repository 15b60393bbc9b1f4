package main

import (
	"reflect"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// TestSourceOptionsAreTheCLIs: the function makes the source of a
// document as every CLI command does (source.OptionsFor), so its checks
// are those of `tributary test-connection`. With destination.topic and
// no topic_prefix the logical name is the pipeline's name
// (docs/configuration.md), not an empty prefix.
func TestSourceOptionsAreTheCLIs(t *testing.T) {
	cfg, err := config.Parse([]byte("name: shop\n" +
		"source: {type: postgres, url: 'postgres://u@db.internal:5432/shop?sslmode=verify-full'}\n" +
		"destination: {bootstrap_servers: 'k:9092', topic: shop.changes, key_columns: {public.orders: [id]}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := sourceOptions(cfg, nil, nil)
	want := source.OptionsFor(cfg)
	if got.TopicPrefix != "shop" {
		t.Errorf("logical name %q, want the pipeline's name shop", got.TopicPrefix)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the function's options\n%+v\nare not the CLI's\n%+v", got, want)
	}
}
