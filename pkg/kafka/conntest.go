package kafka

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// Report is the result of a connection test: the same shape from the CLI
// (--json), the connection-test Lambda and the task's start-up check.
type Report struct {
	OK      bool           `json:"ok"`
	Brokers []BrokerResult `json:"brokers"`
	Checks  []Check        `json:"checks"`
	// Unreachable is true when no bootstrap server could be connected to
	// at all (refused, timed out, TLS failed): an outage or a wrong
	// address, where a refused sign-in is a configuration problem.
	Unreachable bool `json:"-"`
}

// BrokerResult is one broker the cluster advertises.
type BrokerResult struct {
	ID        int32  `json:"id"`
	Host      string `json:"host"`
	Port      int32  `json:"port"`
	Reachable bool   `json:"reachable"`
	Error     string `json:"error,omitempty"` // e.g. "broker 2 at b-2.example.com:9096 is unreachable"
	// Cause is the underlying failure (dial, TLS or sign-in error), for
	// people; Error is the stable sentence.
	Cause string `json:"cause,omitempty"`
}

// Check is one named check (sign-in, metadata, describe/write/create
// permission under the topic prefix).
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail,omitempty"`
	// Required is false for a check that informs without failing the test
	// (create permission when create_missing_topics is off).
	Required bool `json:"required"`
}

// Check names, in report order.
const (
	CheckConfiguration = "configuration"
	CheckSignIn        = "sign-in"
	CheckMetadata      = "metadata"
	CheckBrokers       = "brokers"
	CheckDescribe      = "describe topics"
	CheckWrite         = "write topics"
	CheckCreate        = "create topics"
)

// TestOption changes how TestConnection connects.
type TestOption func(*testOptions)

type testOptions struct {
	dial         DialFunc
	timeout      time.Duration
	transactions bool // conntest_txn.go
}

// WithDialer makes every TCP connection of the test go through dial, which
// may refuse addresses (the Lambda refuses link-local ones). Default: a
// net.Dialer with a 10 s timeout.
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) TestOption {
	return func(o *testOptions) { o.dial = dial }
}

// WithTimeout bounds the whole test. Default 30 s.
func WithTimeout(d time.Duration) TestOption {
	return func(o *testOptions) { o.timeout = d }
}

// ProbeTopic is the topic name under the prefix that the permission checks
// ask about. It is never created: describe asks for its metadata, write
// sends an empty produce request only when it does not exist (the broker
// checks authorization before existence), and create is validate-only.
func ProbeTopic(prefix string) string { return prefix + ".tributary-connection-test" }

// TestConnection signs in to a bootstrap server, reads the metadata, then
// connects and signs in to every broker the cluster advertises, and reports
// whether the principal may describe, write and create topics under
// topicPrefix. It has no side effects on the cluster. Report.OK holds only
// when every required check passed. Errors never hold secrets.
func TestConnection(ctx context.Context, d Options, topicPrefix string, opts ...TestOption) (r Report) {
	r.Brokers = []BrokerResult{}
	o := testOptions{timeout: 30 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	add := func(name string, required, ok bool, detail string) {
		r.Checks = append(r.Checks, Check{Name: name, OK: ok, Detail: detail, Required: required})
	}
	defer func() {
		r.OK = len(r.Checks) > 0
		for _, c := range r.Checks {
			if c.Required && !c.OK {
				r.OK = false
			}
		}
	}()

	kopts, err := clientOpts(d, o.dial)
	if err != nil {
		add(CheckConfiguration, true, false, err.Error())
		return r
	}
	// Produce v13+ names topics by ID, which a missing probe topic has not:
	// keep the name-based versions for the write probe.
	versions := kversion.Stable()
	versions.SetMaxKeyVersion(int16(kmsg.Produce), 12)
	kopts = append(kopts,
		kgo.MaxVersions(versions),
		kgo.RequestRetries(0),
		kgo.RetryTimeout(5*time.Second),
		kgo.RequestTimeoutOverhead(10*time.Second),
	)
	cl, err := kgo.NewClient(kopts...)
	if err != nil {
		add(CheckConfiguration, true, false, err.Error())
		return r
	}
	defer cl.Close()

	// Sign in to one bootstrap server and read the metadata.
	var (
		meta    *kmsg.MetadataResponse
		seedErr []string
		seedOK  string
		unreach = true // every seed failed to connect, none to sign in
	)
	seeds := SeedBrokers(d)
	for i, sb := range cl.SeedBrokers() {
		seed := seeds[min(i, len(seeds)-1)]
		req := kmsg.NewPtrMetadataRequest()
		req.Topics = []kmsg.MetadataRequestTopic{}
		resp, err := sb.Request(ctx, req)
		if err != nil {
			seedErr = append(seedErr, fmt.Sprintf("%s: %s%s", seed, describeConnErr(err), connFix(d, err)))
			var dialErr *DialError
			var tlsErr *TLSError
			unreach = unreach && (errors.As(err, &dialErr) || errors.As(err, &tlsErr) || errors.Is(err, context.DeadlineExceeded))
			continue
		}
		meta, seedOK = resp.(*kmsg.MetadataResponse), seed
		break
	}
	if meta == nil {
		if unreach {
			r.Unreachable = true
			add(CheckSignIn, true, false, "could not connect to any bootstrap server (nothing was signed in to): "+joinSemi(seedErr))
		} else {
			add(CheckSignIn, true, false, "no bootstrap server accepted the sign-in: "+joinSemi(seedErr))
		}
		return r
	}
	add(CheckSignIn, true, true, fmt.Sprintf("signed in to %s with %s", seedOK, authName(d)))
	cluster := ""
	if meta.ClusterID != nil {
		cluster = ", cluster " + *meta.ClusterID
	}
	add(CheckMetadata, true, len(meta.Brokers) > 0, fmt.Sprintf("%d broker(s) advertised%s", len(meta.Brokers), cluster))

	// Every advertised broker, in parallel, each bounded by ctx.
	r.Brokers = make([]BrokerResult, len(meta.Brokers))
	var wg sync.WaitGroup
	for i, b := range meta.Brokers {
		r.Brokers[i] = BrokerResult{ID: b.NodeID, Host: b.Host, Port: b.Port}
		wg.Go(func() { checkBroker(ctx, cl, d, &r.Brokers[i]) })
	}
	wg.Wait()
	reachable, failed := -1, 0
	var brokerErrs []string
	for i, b := range r.Brokers {
		if b.Reachable {
			if reachable < 0 {
				reachable = i
			}
			continue
		}
		failed++
		brokerErrs = append(brokerErrs, b.Error)
	}
	if failed > 0 {
		add(CheckBrokers, true, false, joinSemi(brokerErrs))
	} else {
		add(CheckBrokers, true, len(r.Brokers) > 0, fmt.Sprintf("all %d broker(s) reachable and signed in", len(r.Brokers)))
	}

	versionChecks(ctx, cl, d, add) // conntest_version.go

	// Permissions under the prefix, asked about the probe topic.
	probe := ProbeTopic(topicPrefix)
	exists, canDescribe, ops, detail := describeProbe(ctx, cl, probe)
	if !canDescribe && strings.Contains(detail, "AUTHORIZATION_FAILED") {
		detail += aclFix(d, topicPrefix, "Describe", "Write")
	}
	add(CheckDescribe, true, canDescribe, detail)

	switch {
	case !canDescribe:
		add(CheckWrite, true, false, "not checked: describe is not allowed")
	case exists:
		ok := ops&(1<<int(kmsg.ACLOperationWrite)) != 0
		add(CheckWrite, true, ok, fmt.Sprintf("from the authorized operations of the existing topic %s", probe))
	case reachable < 0:
		add(CheckWrite, true, false, "not checked: no broker is reachable")
	default:
		ok, detail := writeProbe(ctx, cl, r.Brokers[reachable].ID, probe)
		if !ok && strings.Contains(detail, "AUTHORIZATION_FAILED") {
			detail += aclFix(d, topicPrefix, "Write")
		}
		add(CheckWrite, true, ok, detail)
	}

	ok, detail := createProbe(ctx, cl, probe)
	if !d.CreateMissingTopics {
		detail += " (needed only with destination.create_missing_topics)"
	} else if !ok && strings.Contains(detail, "AUTHORIZATION_FAILED") {
		detail += aclFix(d, topicPrefix, "Create")
	} else if ok {
		ok, detail = topicSpecsProbe(ctx, cl, probe, d.TopicSpecs, detail)
	}
	add(CheckCreate, d.CreateMissingTopics, ok, detail)
	if o.transactions {
		ok, detail := transactionsProbe(ctx, kopts, topicPrefix)
		add(CheckTransactions, true, ok, detail)
	}
	return r
}

func checkBroker(ctx context.Context, cl *kgo.Client, d Options, b *BrokerResult) {
	addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	bctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	req := kmsg.NewPtrMetadataRequest()
	req.Topics = []kmsg.MetadataRequestTopic{}
	_, err := cl.Broker(int(b.ID)).Request(bctx, req)
	if err == nil {
		b.Reachable = true
		return
	}
	var dialErr *DialError
	if errors.As(err, &dialErr) || errors.Is(err, context.DeadlineExceeded) {
		b.Error = fmt.Sprintf("broker %d at %s is unreachable", b.ID, addr)
	} else {
		b.Error = fmt.Sprintf("broker %d at %s refused the connection or the sign-in", b.ID, addr)
	}
	b.Cause = describeConnErr(err) + connFix(d, err)
}

// describeProbe asks for the probe topic's metadata: whether it exists,
// whether describe is allowed, and its authorized operations if it exists.
func describeProbe(ctx context.Context, cl *kgo.Client, probe string) (exists, ok bool, ops int32, detail string) {
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = &probe
	req.Topics = []kmsg.MetadataRequestTopic{t}
	req.AllowAutoTopicCreation = false
	req.IncludeTopicAuthorizedOperations = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, false, 0, "metadata request failed: " + describeConnErr(err)
	}
	if len(resp.Topics) != 1 {
		return false, false, 0, fmt.Sprintf("metadata for %s: the broker returned %d topics", probe, len(resp.Topics))
	}
	rt := resp.Topics[0]
	switch err := kerr.ErrorForCode(rt.ErrorCode); {
	case err == nil:
		return true, true, rt.AuthorizedOperations, fmt.Sprintf("allowed (topic %s exists)", probe)
	case errors.Is(err, kerr.UnknownTopicOrPartition):
		return false, true, 0, fmt.Sprintf("allowed for topics like %s", probe)
	default:
		return false, false, 0, fmt.Sprintf("describe %s: %v", probe, err)
	}
}

// writeProbe sends an empty produce request for a topic that does not
// exist. The broker answers TOPIC_AUTHORIZATION_FAILED when writing is
// denied and UNKNOWN_TOPIC_OR_PARTITION when it would be allowed; nothing
// is written either way.
func writeProbe(ctx context.Context, cl *kgo.Client, broker int32, probe string) (bool, string) {
	req := kmsg.NewPtrProduceRequest()
	req.Acks = -1
	req.TimeoutMillis = 5000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = probe
	p := kmsg.NewProduceRequestTopicPartition()
	p.Partition = 0
	t.Partitions = []kmsg.ProduceRequestTopicPartition{p}
	req.Topics = []kmsg.ProduceRequestTopic{t}
	resp, err := cl.Broker(int(broker)).Request(ctx, req)
	if err != nil {
		return false, "produce probe failed: " + describeConnErr(err)
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return false, "produce probe: unexpected response shape"
	}
	switch err := brokerError(pr.Topics[0].Partitions[0].ErrorCode, pr.Topics[0].Partitions[0].ErrorMessage); {
	case errors.Is(err, kerr.UnknownTopicOrPartition), errors.Is(err, kerr.NotLeaderForPartition):
		return true, fmt.Sprintf("allowed for topics like %s", probe)
	case err == nil:
		return true, fmt.Sprintf("allowed for %s", probe)
	default:
		return false, fmt.Sprintf("write %s: %v", probe, err)
	}
}

// createProbe asks the controller to validate, not perform, creating the
// probe topic with the cluster's defaults.
func createProbe(ctx context.Context, cl *kgo.Client, probe string) (bool, string) {
	return createProbeWith(ctx, cl, probe, TopicSpec{Partitions: -1, ReplicationFactor: -1})
}

// createProbeWith is createProbe with spec's partitions, replication
// factor and configs.
func createProbeWith(ctx context.Context, cl *kgo.Client, probe string, spec TopicSpec) (bool, string) {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.ValidateOnly = true
	req.TimeoutMillis = 10000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic = probe
	t.NumPartitions = spec.Partitions
	t.ReplicationFactor = spec.ReplicationFactor
	for k, v := range spec.configs() {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = k, v
		t.Configs = append(t.Configs, c)
	}
	req.Topics = []kmsg.CreateTopicsRequestTopic{t}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return false, "create-topics probe failed: " + describeConnErr(err)
	}
	if len(resp.Topics) != 1 {
		return false, "create-topics probe: unexpected response shape"
	}
	switch err := brokerError(resp.Topics[0].ErrorCode, resp.Topics[0].ErrorMessage); {
	case err == nil, errors.Is(err, kerr.TopicAlreadyExists):
		return true, fmt.Sprintf("allowed for topics like %s (validated only, nothing created)", probe)
	default:
		return false, fmt.Sprintf("create %s (validate only): %v", probe, err)
	}
}

// describeConnErr renders a connection error for people: what failed and
// why, never a secret (kgo's SASL errors carry the broker's message only).
func describeConnErr(err error) string {
	var dialErr *DialError
	var tlsErr *TLSError
	switch {
	case errors.As(err, &tlsErr):
		return tlsErr.Error()
	case errors.As(err, &dialErr):
		return dialErr.Error()
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	}
	return err.Error()
}

func authName(d Options) string {
	a := d.Authentication
	if a == "" {
		a = AuthNone
	}
	if d.DisableTLS {
		return a + " without TLS"
	}
	return a + " over TLS"
}

func joinSemi(parts []string) string { return strings.Join(parts, "; ") }
