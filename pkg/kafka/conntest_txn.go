package kafka

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// CheckTransactions is the check of delivery exactly_once: may the
// principal use transactional ids under the prefix, and does the cluster
// support transactions at all.
const CheckTransactions = "transactions"

// WithTransactions adds the transactions check (delivery exactly_once).
func WithTransactions() TestOption {
	return func(o *testOptions) { o.transactions = true }
}

// ProbeTransactionalID is the transactional id the transactions check
// initialises: under the prefix like the pipeline's own
// (<prefix>.tributary-<name>), so the same ACL or IAM grant covers it, and
// never the pipeline's own, whose initialisation would fence the running
// task.
func ProbeTransactionalID(prefix string) string { return prefix + ".tributary-connection-test" }

// transactionsProbe initialises a producer id for the probe transactional
// id (InitProducerId: the broker checks Write on the transactional id, and
// finds or creates its transaction coordinator). Nothing is written to any
// topic; the coordinator keeps the probe id's empty state until
// transactional.id.expiration.ms.
func transactionsProbe(ctx context.Context, kopts []kgo.Opt, prefix string) (bool, string) {
	id := ProbeTransactionalID(prefix)
	cl, err := kgo.NewClient(append(kopts, kgo.TransactionalID(id))...)
	if err != nil {
		return false, err.Error()
	}
	defer cl.Close()
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return false, fmt.Sprintf("transactional id %s: %v", id, transactionError("initialise a transactional producer", err))
	}
	return true, fmt.Sprintf("allowed for transactional ids like %s (initialised it; nothing written)", id)
}
