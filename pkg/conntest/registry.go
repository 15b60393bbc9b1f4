package conntest

import (
	"context"
	"net"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Dialer makes a connection; nil is the system's.
type Dialer func(ctx context.Context, network, addr string) (net.Conn, error)

// SchemaRegistry is the client of format.schema_registry, for run and for
// the check below, its connections made through dial when set; calls,
// when set, is told of each request (run's metrics).
func SchemaRegistry(ctx context.Context, cfg *config.Config, dial Dialer, calls avro.Calls) (avro.Registry, error) {
	r := cfg.Format.SchemaRegistry
	if r.Type == config.RegistryGlue {
		return avro.NewGlue(ctx, avro.GlueOptions{RegistryName: r.RegistryName, Region: r.Region, RoleARN: r.RoleARN,
			ExternalID: r.ExternalID, Compatibility: r.Compatibility, Dial: dial, Calls: calls})
	}
	return avro.NewConfluent(avro.ConfluentOptions{URL: r.URL, Username: r.Username, Password: r.Password,
		CAPEM: []byte(r.CACertificate), Dial: dial, Calls: calls})
}

// RegistryChecks are the connection test's "schema registry" line, shared
// by `tributary test-connection` and the connection-test function: none
// when keys and values are JSON. The line says whether the registry
// answers, lets the pipeline's credentials read it, and would let them
// register under the pipeline's topics (asked without registering: see
// avro.Probe). glueAsPipeline is false where Glue would be asked as an
// identity that is not the pipeline's (the function's own role, without
// format.schema_registry.role_arn): then Glue's permission to register is
// not asked, since the answer would be about that identity.
func RegistryChecks(ctx context.Context, cfg *config.Config, dial Dialer, glueAsPipeline bool) []source.Check {
	if !cfg.Format.AvroKey() && !cfg.Format.AvroValue() {
		return nil
	}
	const name = "schema registry"
	reg, err := SchemaRegistry(ctx, cfg, dial, nil)
	if err != nil {
		return []source.Check{{Name: name, Detail: err.Error(), Fix: "correct format.schema_registry"}}
	}
	probe := avro.NewProbe(cfg.Destination.TopicPrefix, cfg.Destination.Topic, !cfg.Format.AvroValue())
	var c avro.Check
	switch r := reg.(type) {
	case *avro.Confluent:
		c = r.Check(ctx, probe)
	case *avro.Glue:
		if !glueAsPipeline {
			c = r.Check(ctx, nil)
			if c.OK {
				c.Detail += "; the permission to register is not asked here: Glue would answer for this function's role, not the pipeline's" +
					" (it is asked with format.schema_registry.role_arn)"
			}
			break
		}
		c = r.Check(ctx, probe)
	}
	return []source.Check{{Name: name, OK: c.OK, Detail: c.Detail, Fix: c.Fix}}
}
