package main

import (
	"fmt"
	"regexp"
	"strings"
)

// QueuesVariable names the environment variable that binds each
// row-skipped queue to its pipeline: "<pipeline>=<queue ARN>" entries
// joined by ','. infra/dataplane.go sets it: one queue per pipeline, to
// which only that pipeline's task role may send, so the queue a message
// came from says which pipeline sent it.
const QueuesVariable = "ROW_SKIPPED_QUEUES"

var pipelineName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// parseQueues reads QueuesVariable's value into queue ARN → pipeline.
func parseQueues(s string) (map[string]string, error) {
	queues := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%s is empty: no queue is bound to a pipeline, so no event could be delivered", QueuesVariable)
	}
	for entry := range strings.SplitSeq(s, ",") {
		name, arn, ok := strings.Cut(strings.TrimSpace(entry), "=")
		switch {
		case !ok || !pipelineName.MatchString(name):
			return nil, fmt.Errorf("%s: entry %q is not <pipeline>=<queue ARN> with a pipeline name of [a-z0-9_-]", QueuesVariable, entry)
		case !strings.HasPrefix(arn, "arn:") || strings.Count(arn, ":") != 5:
			return nil, fmt.Errorf("%s: pipeline %s: %q is not an SQS queue ARN", QueuesVariable, name, arn)
		case queues[arn] != "":
			return nil, fmt.Errorf("%s: queue %s is bound to both %s and %s", QueuesVariable, arn, queues[arn], name)
		}
		queues[arn] = name
	}
	return queues, nil
}

// PrivateWebhooksVariable names the environment variable listing, joined
// by ',', the pipelines whose webhook receivers may be at private
// addresses (infra/dataplane.go sets it from the privateWebhooks context).
// The stack decides, not the document: a document's
// webhooks.allow_private_network counts only for these pipelines.
const PrivateWebhooksVariable = "PRIVATE_WEBHOOK_PIPELINES"

// parsePrivate reads PrivateWebhooksVariable's value; names that are not
// pipeline names match no pipeline and are left out.
func parsePrivate(s string) map[string]bool {
	private := map[string]bool{}
	for name := range strings.SplitSeq(s, ",") {
		if name = strings.TrimSpace(name); pipelineName.MatchString(name) {
			private[name] = true
		}
	}
	return private
}
