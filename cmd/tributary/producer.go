package main

// The producer and the exactly-once setup each delivery mode asks for.

import (
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
	"github.com/tributary-cdc/tributary/pkg/pipeline"
)

// newProducer is the producer delivery asks for: transactional, with the
// pipeline's transactional id, for exactly_once.
func newProducer(cfg *config.Config) (*kafka.Producer, error) {
	dest := destination.Producer(cfg)
	if cfg.ExactlyOnce() {
		return kafka.NewTransactionalProducer(dest, cfg.TransactionalID())
	}
	return kafka.NewProducer(dest)
}

// transactions is the pipeline's exactly-once setup; nil at least once.
func transactions(cfg *config.Config) *pipeline.Transactions {
	if !cfg.ExactlyOnce() {
		return nil
	}
	return &pipeline.Transactions{
		OffsetsTopic: cfg.OffsetsTopic(),
		MaxRecords:   cfg.Transactions.MaxRecords,
		MaxInterval:  cfg.Transactions.TransactionInterval(),
	}
}
