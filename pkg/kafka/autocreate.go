package kafka

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// autoCreated asks the cluster for topic's metadata allowing automatic
// creation, as a producer's first send does: a cluster with
// auto.create.topics.enable creates the topic with its defaults (the
// broker answers LEADER_NOT_AVAILABLE while the new topic elects its
// leaders), one without it answers UNKNOWN_TOPIC_OR_PARTITION. This is
// how a topic that may not be created by Tributary (create_missing_topics
// false) still comes to exist where the cluster's owner allows it.
func (p *Producer) autoCreated(ctx context.Context, topic string) bool {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, t)
	req.AllowAutoTopicCreation = true
	resp, err := req.RequestWith(ctx, p.cl)
	if err != nil {
		return false
	}
	for _, rt := range resp.Topics {
		if rt.Topic == nil || *rt.Topic != topic {
			continue
		}
		err := kerr.ErrorForCode(rt.ErrorCode)
		return err == nil || errors.Is(err, kerr.LeaderNotAvailable)
	}
	return false
}
