package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/conntest"
	"github.com/tributary-cdc/tributary/pkg/destination"
	"github.com/tributary-cdc/tributary/pkg/kafka"
)

const (
	// testTimeout bounds the Kafka checks; testBudget shortens it to what
	// is left of the invocation.
	testTimeout = 20 * time.Second
	// dialTimeout bounds one TCP connection attempt.
	dialTimeout = 5 * time.Second
)

// Handler answers connection-test requests.
type Handler struct {
	configs *pipelines.Configs
	dial    func(ctx context.Context, network, addr string) (net.Conn, error)
	log     *slog.Logger
	// targets binds pipelines to writer roles and hosts (targets.go); the
	// zero value binds no role and limits no host.
	targets targets
}

// NewHandler returns a Handler reading pipelines from configs.
func NewHandler(configs *pipelines.Configs, log *slog.Logger) *Handler {
	return &Handler{configs: configs, dial: dialguard.Dialer(dialTimeout), log: log}
}

// errorBody is every non-200 answer.
type errorBody struct {
	Error    string   `json:"error"`
	Problems []string `json:"problems,omitempty"`
}

// Handle answers 200 with the source's checks, the kafka.Report and, with
// Avro, the schema registry's check (ok only when every one passed), 400
// for a bad request or a pipeline whose configuration does not load, 404
// for an unknown pipeline.
// Responses and logs carry no secret: configuration problems name fields,
// the report's details come from kafka.TestConnection and the source's
// Check, which promise the same, and scrub takes every value a reference resolved to out of it (a
// document could put a secret where the report shows it, e.g. as a broker).
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	log := h.log.With("request_id", req.RequestContext.RequestID)
	name, err := parseRequest(req)
	if err != nil {
		log.Info("bad request", "err", err.Error())
		return respond(http.StatusBadRequest, errorBody{Error: err.Error()}), nil
	}
	log = log.With("pipeline", name)
	cfg, resolved, err := h.configs.GetWithSecrets(ctx, name)
	var problems *config.Errors
	switch {
	case errors.Is(err, config.ErrParameterNotFound):
		log.Info("unknown pipeline")
		return respond(http.StatusNotFound, errorBody{Error: "pipeline " + name + " not found"}), nil
	case errors.As(err, &problems):
		// Problems name fields, never a value read through a reference;
		// the scrub is the second line of defence for what a caller who
		// may edit the document but not read its secrets gets back.
		log.Info("pipeline configuration does not load", "problems", len(problems.Problems))
		b := errorBody{Error: "pipeline " + name + " has an invalid configuration"}
		text := scrubber(resolved)
		for _, p := range problems.Problems {
			b.Problems = append(b.Problems, text(p.String()))
		}
		return respond(http.StatusBadRequest, b), nil
	case err != nil:
		log.Error("reading the pipeline configuration", "err", scrubber(resolved)(err.Error()))
		return respond(http.StatusInternalServerError, errorBody{Error: "the pipeline configuration cannot be read now"}), nil
	}
	if status, refused := h.targets.refusals(name, cfg); status != 0 {
		log.Info("connection test refused", "status", status, "problems", len(refused))
		return respond(status, errorBody{Error: "pipeline " + name + ": the connection test refuses this document", Problems: refused}), nil
	}
	budget, ok := testBudget(ctx, time.Now())
	if !ok {
		log.Error("no time left for the connection test after reading the configuration")
		return respond(http.StatusGatewayTimeout, errorBody{Error: "reading the pipeline configuration took too long; try again"}), nil
	}
	// The source, Kafka and the schema registry are tested side by side,
	// so each has the whole budget; all dial only through h.dial.
	var r response
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		r.Source = sourceChecks(ctx, cfg, h.dial, budget, slog.New(scrubHandler{Handler: log.Handler(), text: scrubber(resolved)}))
	}()
	go func() {
		defer wg.Done()
		rctx, cancel := context.WithTimeout(ctx, budget)
		defer cancel()
		// Glue is asked as the pipeline only through its role_arn (the
		// writer role targets allows); else it would be this function's
		// own role, whose permissions say nothing of the pipeline's.
		r.Registry = conntest.RegistryChecks(rctx, cfg, h.dial, cfg.Format.SchemaRegistry.RoleARN != "")
	}()
	r.Report = kafka.TestConnection(ctx, destination.Kafka(cfg.Destination), cfg.Destination.TopicPrefix,
		destination.TestOptions(cfg, kafka.WithDialer(h.dial), kafka.WithTimeout(budget))...)
	wg.Wait()
	r.OK = r.Report.OK
	for _, c := range append(r.Source, r.Registry...) {
		r.OK = r.OK && c.OK
	}
	scrub(&r, resolved)
	log.Info("connection test", "ok", r.OK, "kafka_ok", r.Report.OK, "source_checks", len(r.Source), "registry_checks", len(r.Registry), "brokers", len(r.Report.Brokers))
	return respond(http.StatusOK, r), nil
}

func respond(status int, v any) events.APIGatewayV2HTTPResponse {
	body, err := json.Marshal(v)
	if err != nil { // only our own types reach here
		status, body = http.StatusInternalServerError, []byte(`{"error":"internal error"}`)
	}
	return events.APIGatewayV2HTTPResponse{
		StatusCode: status,
		Headers:    map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"},
		Body:       string(body),
	}
}
