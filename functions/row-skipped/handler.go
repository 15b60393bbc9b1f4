package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
	"github.com/tributary-cdc/tributary/pkg/webhook"
)

// deliveryTimeout bounds one webhook POST, connection included.
const deliveryTimeout = 10 * time.Second

// Handler delivers a batch of row.skipped messages.
type Handler struct {
	configs *pipelines.Configs
	// queues maps a queue ARN to the one pipeline whose task may send to it.
	queues map[string]string
	// private are the pipelines the stack lets deliver into the network
	// (PrivateWebhooksVariable): a document's allow_private_network is
	// honoured only for them, since whoever edits a document is not
	// trusted to open the VPC to the function.
	private map[string]bool
	// client dials public addresses only; privateClient, for the private
	// pipelines whose document sets webhooks.allow_private_network,
	// private ones too. Neither reaches loopback, link-local or instance
	// metadata.
	client, privateClient *http.Client
	now                   func() time.Time
	log                   *slog.Logger
}

// NewHandler returns a Handler that delivers the events of the queues
// bound to pipelines in queues (queue ARN → pipeline, QueuesVariable), looks
// pipelines up in configs and POSTs through a client that refuses
// loopback, link-local and (unless private lists the pipeline and its
// document allows them) private addresses, follows no redirects and uses
// no proxy.
func NewHandler(configs *pipelines.Configs, queues map[string]string, private map[string]bool, log *slog.Logger) *Handler {
	return &Handler{
		configs:       configs,
		queues:        queues,
		private:       private,
		client:        newClient(dialguard.PublicDialer(5 * time.Second)),
		privateClient: newClient(dialguard.Dialer(5 * time.Second)),
		now:           time.Now,
		log:           log,
	}
}

func newClient(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Client {
	return &http.Client{
		Timeout: deliveryTimeout,
		Transport: &http.Transport{
			DialContext:           dial,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: deliveryTimeout,
			MaxIdleConnsPerHost:   2,
			ForceAttemptHTTP2:     true,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Handle delivers each message and returns those that failed as batch
// item failures; the batch itself never fails, so delivered messages are
// not sent twice because a neighbour failed.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range ev.Records {
		id, err := h.deliver(ctx, m)
		if err != nil {
			h.log.Warn("row.skipped not delivered; SQS will retry it", "message_id", m.MessageId, "event_id", id, "err", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			continue
		}
		h.log.Info("row.skipped delivered", "message_id", m.MessageId, "event_id", id)
	}
	return resp, nil
}

// deliver POSTs one message's event. Its errors never hold the signing
// secret or the webhook URL's secrets.
//
// The event is signed for the pipeline whose queue it came from, and only
// when it names that pipeline: each pipeline has its own queue, to which
// only its task role may send (infra/dataplane.go), so a task cannot have
// another pipeline's webhooks signed. A message failing that check is
// reported like any failure: SQS tries it again up to the queue's receive
// limit, then moves it to the DLQ, where the RowSkippedDeadLetters alarm
// shows it (docs/aws.md).
func (h *Handler) deliver(ctx context.Context, m events.SQSMessage) (eventID string, err error) {
	sender, ok := h.queues[m.EventSourceARN]
	if !ok {
		return "", fmt.Errorf("message from queue %s, which %s binds to no pipeline: not delivered", m.EventSourceARN, QueuesVariable)
	}
	body := []byte(m.Body)
	ev, err := webhook.DecodeRowSkipped(body)
	if err != nil {
		return "", err
	}
	if ev.Pipeline != sender {
		return ev.EventID, fmt.Errorf("event names pipeline %s but came from the queue of pipeline %s: not signed (only %s's task may send to that queue)",
			ev.Pipeline, sender, sender)
	}
	cfg, err := h.configs.Get(ctx, ev.Pipeline)
	if err != nil {
		return ev.EventID, fmt.Errorf("pipeline %s: %w", ev.Pipeline, err)
	}
	target := cfg.Webhooks.RowSkippedURL
	if target == "" {
		// Kept in the queue (then the DLQ) rather than dropped: the event
		// is the only record that the row was skipped.
		return ev.EventID, fmt.Errorf("pipeline %s has no webhooks.row_skipped_url", ev.Pipeline)
	}
	shown := origin(target)
	ts := h.now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return ev.EventID, fmt.Errorf("webhook %s: cannot build the request", shown)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "tributary-row-skipped")
	if cfg.Webhooks.SigningSecret != "" {
		webhook.SetHeaders(req.Header, cfg.Webhooks.SigningSecret, ev.EventID, ts, body)
	} else {
		req.Header.Set(webhook.HeaderID, ev.EventID)
		req.Header.Set(webhook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	}
	client := h.client
	if cfg.Webhooks.AllowPrivateNetwork && h.private[cfg.Name] {
		client = h.privateClient
	}
	res, err := client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) { // its message holds the full URL
			err = uerr.Err
		}
		return ev.EventID, fmt.Errorf("webhook %s: %w", shown, err)
	}
	io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return ev.EventID, fmt.Errorf("webhook %s answered %s", shown, res.Status)
	}
	return ev.EventID, nil
}

// origin is what logs and errors show of a webhook URL: its scheme and
// host. Path and query often are the credential (hooks.slack.com/services/
// T…/B…/<token>), and a user name may be one too.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
