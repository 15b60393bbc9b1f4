package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// maxProduceRequestTimeout is franz-go's default wait for a broker's
// answer to one produce request; a shorter publish_timeout shortens it.
const maxProduceRequestTimeout = 10 * time.Second

// sinkOpts turns the sink settings into franz-go options:
//   - publish_timeout: RecordDeliveryTimeout, the whole wait of a record
//     (metadata lookups, buffering and every retry) before it fails, and
//     the produce request timeout within it;
//   - max_in_flight / max_in_flight_bytes: MaxBufferedRecords and
//     MaxBufferedBytes, beyond which Publish blocks (backpressure);
//   - max_message_bytes: the batch cap, per topic the smaller of it and the
//     topic's max.message.bytes (limits), so that a limit over franz-go's
//     1 MB default works and no batch is larger than the topic takes;
//   - client_id, when set (ClientOpts sets "tributary" otherwise).
func sinkOpts(d config.Destination, limits *topicLimits) []kgo.Opt {
	timeout := d.PublishTimeoutDuration()
	opts := []kgo.Opt{
		kgo.RecordDeliveryTimeout(timeout),
		kgo.ProduceRequestTimeout(min(timeout, maxProduceRequestTimeout)),
		kgo.MaxBufferedRecords(d.InFlightRecords()),
		kgo.MaxBufferedBytes(int(d.InFlightBytes())),
		kgo.ProducerBatchMaxBytesFn(limits.batchMaxBytes),
	}
	if d.ClientID != "" {
		opts = append(opts, kgo.ClientID(d.ClientID))
	}
	return opts
}
