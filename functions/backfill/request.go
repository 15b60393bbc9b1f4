package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tributary-cdc/tributary/pkg/checkpoint"
)

const (
	// maxBodyBytes bounds the body: a list of table names.
	maxBodyBytes = 16 << 10
	// maxTables bounds the tables of one request.
	maxTables = 500
)

var (
	pipelineName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
	// tableName is the form of source.tables (schema.table, db.table).
	tableName = regexp.MustCompile(`^[^.\s,*]{1,128}\.[^.\s,*]{1,128}$`)
)

// badRequest is a problem with the request itself (400). Its message
// names the field and never quotes more than a table name.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// body is the request body: {"tables": [...]} or {"all": true}.
type body struct {
	Tables *[]string `json:"tables"`
	All    *bool     `json:"all"`
}

// parseRequest returns the pipeline and the request. The request comes
// from outside: POST, the path /pipelines/{name}/backfill with a valid
// pipeline name (agreeing with API Gateway's path parameter), and a JSON
// object with exactly one of tables (a non-empty list of schema.table) or
// all (true).
func parseRequest(req events.APIGatewayV2HTTPRequest) (string, checkpoint.Request, error) {
	if m := req.RequestContext.HTTP.Method; m != "POST" {
		return "", checkpoint.Request{}, &badRequest{"method must be POST"}
	}
	path := req.RawPath
	if path == "" {
		path = req.RequestContext.HTTP.Path
	}
	rest, ok := strings.CutPrefix(path, "/pipelines/")
	name, ok2 := strings.CutSuffix(rest, "/backfill")
	if !ok || !ok2 {
		return "", checkpoint.Request{}, &badRequest{"path must be /pipelines/{name}/backfill"}
	}
	if !pipelineName.MatchString(name) {
		return "", checkpoint.Request{}, &badRequest{"pipeline name must match [a-z0-9_-]{1,64}"}
	}
	if p, ok := req.PathParameters["name"]; ok && p != name {
		return "", checkpoint.Request{}, &badRequest{"path parameter name does not match the path"}
	}
	r, err := parseBody(req.Body, req.IsBase64Encoded)
	return name, r, err
}

func parseBody(raw string, b64 bool) (checkpoint.Request, error) {
	if len(raw) > maxBodyBytes*2 {
		return checkpoint.Request{}, &badRequest{"body too large"}
	}
	data := []byte(raw)
	if b64 {
		var err error
		if data, err = base64.StdEncoding.DecodeString(raw); err != nil {
			return checkpoint.Request{}, &badRequest{"body is not valid base64"}
		}
	}
	if len(data) > maxBodyBytes {
		return checkpoint.Request{}, &badRequest{"body too large"}
	}
	var b body
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return checkpoint.Request{}, &badRequest{"body takes only the fields tables and all"}
		}
		return checkpoint.Request{}, &badRequest{`body must be a JSON object: {"tables": ["schema.table", …]} or {"all": true}`}
	}
	if dec.More() {
		return checkpoint.Request{}, &badRequest{"body must be one JSON object"}
	}
	switch {
	case b.Tables != nil && b.All != nil:
		return checkpoint.Request{}, &badRequest{"tables and all exclude each other"}
	case b.All != nil:
		if !*b.All {
			return checkpoint.Request{}, &badRequest{"all must be true (or give tables)"}
		}
		return checkpoint.Request{All: true}, nil
	case b.Tables == nil:
		return checkpoint.Request{}, &badRequest{`give tables (["schema.table", …]) or "all": true`}
	case len(*b.Tables) == 0:
		return checkpoint.Request{}, &badRequest{"tables must not be empty"}
	case len(*b.Tables) > maxTables:
		return checkpoint.Request{}, &badRequest{fmt.Sprintf("tables holds more than %d names", maxTables)}
	}
	for i, t := range *b.Tables {
		if !tableName.MatchString(t) {
			return checkpoint.Request{}, &badRequest{fmt.Sprintf("tables[%d] must be schema.table (as source.tables writes it)", i)}
		}
	}
	return checkpoint.Request{}.Merge(checkpoint.Request{Tables: *b.Tables}), nil
}
