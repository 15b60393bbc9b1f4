package main

import (
	"context"
	"log/slog"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/conntest"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/metrics"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
)

// avroRecoder returns the pipeline's Recoder for format.key / format.value
// avro, with the client of format.schema_registry; nil when both are JSON.
// Its registry requests are counted in m.
func avroRecoder(ctx context.Context, cfg *config.Config, log *slog.Logger, m *metrics.Pipeline) (pipeline.Recoder, error) {
	f := cfg.Format
	if !f.AvroKey() && !f.AvroValue() {
		return nil, nil
	}
	reg, err := conntest.SchemaRegistry(ctx, cfg, nil, m.SchemaRegistryCalls())
	if err != nil {
		return nil, err
	}
	return &avro.Recoder{Registry: reg, Key: f.AvroKey(), Value: f.AvroValue(), Log: log}, nil
}
