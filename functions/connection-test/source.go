package main

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/conntest"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// response is Kafka's report with the source's checks beside it, and the
// schema registry's with Avro, the shape `tributary test-connection
// --json` prints; OK only when every one passed.
type response struct {
	kafka.Report
	OK     bool           `json:"ok"`
	Source []source.Check `json:"source"`
	// Registry: format.schema_registry's check (pkg/conntest), with Avro only.
	Registry []source.Check `json:"schema_registry,omitempty"`
}

// sourceOptions are the source's options as every command makes them
// (source.OptionsFor), with the function's guarded dialer and logger.
func sourceOptions(cfg *config.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), log *slog.Logger) source.Options {
	opts := source.OptionsFor(cfg)
	opts.Dial, opts.Logger = dial, log
	return opts
}

// sourceChecks runs the source's checks within budget, as
// `tributary test-connection` does (pkg/conntest: with the "listed
// tables" and "column types" lines), every connection through dial (the
// guarded dialer): a source is never dialled any other way. A source that
// cannot be set up answers one failed line instead. What the source logs
// goes to log (scrubHandler).
func sourceChecks(ctx context.Context, cfg *config.Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), budget time.Duration, log *slog.Logger) []source.Check {
	src, err := capture.New(ctx, sourceOptions(cfg, dial, log))
	if err != nil {
		return []source.Check{{Name: "source connection", Detail: err.Error()}}
	}
	defer src.Close()
	checks := conntest.SourceChecks(ctx, src, cfg, budget)
	if len(checks) == 0 {
		return []source.Check{{Name: "source connection", Detail: "source type " + cfg.Source.Type + " has no connection test"}}
	}
	return checks
}
