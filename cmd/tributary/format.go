package main

import (
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// messageFormat is the encoder's Format for the document's format keys
// (docs/configuration.md, "Message format").
func messageFormat(cfg *config.Config) debezium.Format {
	f := cfg.Format.Effective(cfg.Source.Type)
	return debezium.Format{
		NoSchemas:      !f.SchemasEnabled(),
		Unwrap:         f.Unwrap,
		DeleteHandling: f.DeleteHandling,
		AddFields:      f.AddFields,
		Decimal:        f.DecimalHandling,
		Time:           f.TimePrecision,
		Binary:         f.BinaryHandling,
	}
}
