package source

import "github.com/tributary-cdc/tributary/pkg/config"

// OptionsFor is the one place a pipeline document becomes a driver's
// Options: every command and function starts from it, so that a source
// is the same source wherever it is made (the logical name, the key
// columns). The caller adds what only it knows: its logger, its dialer,
// whether its checkpoint store leases, the hooks of a running pipeline.
func OptionsFor(cfg *config.Config) Options {
	return Options{
		Pipeline: cfg.Name,
		// Debezium's logical server name: destination.topic_prefix, or
		// the pipeline's name with destination.topic (docs/configuration.md).
		TopicPrefix: cfg.LogicalName(),
		Config:      cfg.Source,
		KeyColumns:  cfg.Destination.KeyColumns,
		// The loop marks transactions only for a format that writes them.
		TransactionMetadata: cfg.Format.ProvideTransactionMetadata,
	}
}
