package kafka

import (
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Options are the settings of a Kafka client: how to reach and sign in to
// the cluster, and how the producer publishes. Each field is the
// destination setting of the same name in docs/configuration.md (a caller
// builds Options from its configuration: this package reads no
// configuration document). Password, ExternalID and ClientKey are
// secrets: no error or log line of this package holds them.
type Options struct {
	// BootstrapServers is comma-separated host:port; required.
	BootstrapServers string
	// Authentication is one of the Auth constants; "" is AuthNone.
	Authentication string
	Username       string
	Password       string
	// AWSRoleARN, ExternalID and AWSRegion are for AuthAWSMSKIAM.
	AWSRoleARN string
	ExternalID string
	AWSRegion  string
	// DisableTLS is for plaintext listeners only; TLS is on by default and
	// its verification is never switched off.
	DisableTLS bool
	// CACertificate (PEM) replaces the system roots; ClientCertificate and
	// ClientKey (PEM, both or neither) enable mutual TLS.
	CACertificate     string
	ClientCertificate string
	ClientKey         string
	// ClientID names the client to the brokers; "" is "tributary".
	ClientID string

	// CreateMissingTopics creates a topic that does not exist with the
	// cluster's defaults (EnsureTopic).
	CreateMissingTopics bool
	// TopicSpec, when set, says how EnsureTopic creates a topic
	// (destination.topic_creation); nil: the cluster's default partitions
	// and replication factor, no topic configs.
	TopicSpec func(topic string) TopicSpec
	// TopicSpecs are every group's TopicSpec, which the connection test
	// validates with the cluster (nothing is created).
	TopicSpecs []TopicSpec
	// MessageCompression "gzip" gzips values of GzipThreshold bytes or
	// more before the size check (Publish); anything else sends them as
	// they are.
	MessageCompression string
	// MaxMessageBytes is the largest record Publish hands over, as the
	// broker counts it (BatchSize); 0 is 1 MiB.
	MaxMessageBytes int
	// PublishTimeout is the whole wait of a record (metadata lookups,
	// buffering and every retry) before it fails; 0 is franz-go's default.
	PublishTimeout time.Duration
	// MaxInFlight and MaxInFlightBytes bound the records and bytes
	// buffered, beyond which Publish blocks (backpressure); 0 is
	// franz-go's default.
	MaxInFlight      int
	MaxInFlightBytes int64
}

// The authentication mechanisms of Options.Authentication.
const (
	AuthNone        = "NONE"
	AuthPlain       = "PLAIN"
	AuthSCRAMSHA256 = "SCRAM-SHA-256"
	AuthSCRAMSHA512 = "SCRAM-SHA-512"
	AuthAWSMSKIAM   = "AWS_MSK_IAM"
)

// maxProduceRequestTimeout is franz-go's default wait for a broker's
// answer to one produce request; a shorter publish_timeout shortens it.
const maxProduceRequestTimeout = 10 * time.Second

// producerOpts turns the producer settings into franz-go options:
//   - PublishTimeout: RecordDeliveryTimeout, the whole wait of a record
//     (metadata lookups, buffering and every retry) before it fails, and
//     the produce request timeout within it;
//   - MaxInFlight / MaxInFlightBytes: MaxBufferedRecords and
//     MaxBufferedBytes, beyond which Publish blocks (backpressure);
//   - MaxMessageBytes: the batch cap, per topic the smaller of it and the
//     topic's max.message.bytes (messagesize.go), so that a limit over franz-go's
//     1 MB default works and no batch is larger than the topic takes; and
//     BrokerMaxWriteBytes, raised above franz-go's 100 MiB default when a
//     produce request holding a batch at the cap needs it;
//   - ClientID, when set (ClientOpts sets "tributary" otherwise).
func producerOpts(o Options, limits *topicLimits) []kgo.Opt {
	opts := []kgo.Opt{
		kgo.ProducerBatchMaxBytesFn(limits.batchMaxBytes),
		kgo.BrokerMaxWriteBytes(brokerMaxWriteBytes(limits.def)),
	}
	if o.PublishTimeout > 0 {
		opts = append(opts,
			kgo.RecordDeliveryTimeout(o.PublishTimeout),
			kgo.ProduceRequestTimeout(min(o.PublishTimeout, maxProduceRequestTimeout)))
	}
	if o.MaxInFlight > 0 {
		opts = append(opts, kgo.MaxBufferedRecords(o.MaxInFlight))
	}
	if o.MaxInFlightBytes > 0 {
		opts = append(opts, kgo.MaxBufferedBytes(int(o.MaxInFlightBytes)))
	}
	if o.ClientID != "" {
		opts = append(opts, kgo.ClientID(o.ClientID))
	}
	return opts
}
