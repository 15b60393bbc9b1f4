package main

import (
	"context"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// registryChecks are test-connection's checks of format.schema_registry:
// none when keys and values are JSON.
func registryChecks(ctx context.Context, cfg *config.Config) []source.Check {
	if !cfg.Format.AvroKey() && !cfg.Format.AvroValue() {
		return nil
	}
	const name = "schema registry"
	reg, err := schemaRegistry(ctx, cfg, nil)
	if err != nil {
		return []source.Check{{Name: name, Detail: err.Error(), Fix: "correct format.schema_registry"}}
	}
	var c avro.Check
	switch r := reg.(type) {
	case *avro.Confluent:
		c = r.Check(ctx)
	case *avro.Glue:
		c = r.Check(ctx)
	}
	return []source.Check{{Name: name, OK: c.OK, Detail: c.Detail, Fix: c.Fix}}
}
