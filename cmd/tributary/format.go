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
		Documents:      cfg.Source.Type == config.SourceMongoDB,
	}
}

// outbox is the encoder's outbox router (transforms.outbox), nil when off.
func outbox(cfg *config.Config) *debezium.Outbox {
	o := cfg.Transforms.Outbox
	if !o.Enabled {
		return nil
	}
	e := o.Effective()
	out := &debezium.Outbox{EventID: e.TableFieldEventID, EventKey: e.TableFieldEventKey, Payload: e.TableFieldEventPayload,
		RouteBy: e.RouteByField, Topic: o.OutboxTopic(), TombstoneOnEmptyPayload: e.RouteTombstoneOnEmptyPayload,
		ExpandJSONPayload: e.TableExpandJSONPayload}
	for _, p := range o.Placements() {
		out.Additional = append(out.Additional, debezium.OutboxField{Column: p.Column, Envelope: p.Envelope, Alias: p.Alias})
	}
	return out
}
