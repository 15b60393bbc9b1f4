package main

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

// Handler answers backfill requests.
type Handler struct {
	client *dynamodb.Client
	table  string
	log    *slog.Logger
}

// NewHandler returns a Handler writing requests into table.
func NewHandler(client *dynamodb.Client, table string, log *slog.Logger) *Handler {
	return &Handler{client: client, table: table, log: log}
}

type errorBody struct {
	Error string `json:"error"`
}

// accepted is the 202 answer.
type accepted struct {
	Pipeline string   `json:"pipeline"`
	All      bool     `json:"all,omitempty"`
	Tables   []string `json:"tables,omitempty"`
	Message  string   `json:"message"`
}

// Handle answers 202 once the request is in the checkpoint table, 400 for
// a bad request (naming the field), 404 for a pipeline this stack does not
// run (the role may write only the deployed pipelines' items), 409 for a
// pipeline that never ran (its first run backfills every table).
// Responses and logs hold the pipeline and the table names, nothing else
// of the request.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	log := h.log.With("request_id", req.RequestContext.RequestID)
	name, r, err := parseRequest(req)
	if err != nil {
		log.Info("bad request", "err", err.Error())
		return respond(http.StatusBadRequest, errorBody{Error: err.Error()}), nil
	}
	log = log.With("pipeline", name)
	err = checkpoint.RequestBackfillDynamoDB(ctx, h.client, h.table, name, r)
	var apiErr smithy.APIError
	switch {
	case errors.Is(err, checkpoint.ErrNeverRan):
		log.Info("pipeline never ran")
		return respond(http.StatusConflict, errorBody{Error: "pipeline " + name + " has never run: its first run backfills every table; nothing queued"}), nil
	case errors.As(err, &apiErr) && apiErr.ErrorCode() == "AccessDeniedException":
		log.Info("pipeline not deployed by this stack")
		return respond(http.StatusNotFound, errorBody{Error: "pipeline " + name + " not found"}), nil
	case err != nil:
		log.Error("writing the backfill request", "err", err.Error())
		return respond(http.StatusInternalServerError, errorBody{Error: "the request cannot be written now; try again"}), nil
	}
	log.Info("backfill requested", "all", r.All, "tables", r.Tables)
	return respond(http.StatusAccepted, accepted{Pipeline: name, All: r.All, Tables: r.Tables,
		Message: "queued: the running pipeline starts the snapshot within a few seconds (or its next run does, before it streams); follow it with tributary status"}), nil
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
