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
// when keys and values are JSON.
func RegistryChecks(ctx context.Context, cfg *config.Config, dial Dialer) []source.Check {
	if !cfg.Format.AvroKey() && !cfg.Format.AvroValue() {
		return nil
	}
	const name = "schema registry"
	reg, err := SchemaRegistry(ctx, cfg, dial, nil)
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
