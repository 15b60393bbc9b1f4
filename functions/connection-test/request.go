package main

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// maxBodyBytes bounds the request body; the route takes none (or "{}").
const maxBodyBytes = 4 << 10

var pipelineName = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// badRequest is a problem with the request itself (400). Its message
// never quotes the request.
type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }

// parseRequest returns the pipeline a request names. The request comes
// from outside: the method must be POST, the path
// /pipelines/{name}/connection-test with a valid pipeline name (agreeing
// with API Gateway's path parameter when there is one), and the body
// empty or an empty JSON object.
func parseRequest(req events.APIGatewayV2HTTPRequest) (string, error) {
	if m := req.RequestContext.HTTP.Method; m != "POST" {
		return "", &badRequest{"method must be POST"}
	}
	path := req.RawPath
	if path == "" {
		path = req.RequestContext.HTTP.Path
	}
	rest, ok := strings.CutPrefix(path, "/pipelines/")
	if !ok {
		return "", &badRequest{"path must be /pipelines/{name}/connection-test"}
	}
	name, ok := strings.CutSuffix(rest, "/connection-test")
	if !ok {
		return "", &badRequest{"path must be /pipelines/{name}/connection-test"}
	}
	if !pipelineName.MatchString(name) {
		return "", &badRequest{"pipeline name must match [a-z0-9_-]{1,64}"}
	}
	if p, ok := req.PathParameters["name"]; ok && p != name {
		return "", &badRequest{"path parameter name does not match the path"}
	}
	if err := checkBody(req.Body, req.IsBase64Encoded); err != nil {
		return "", err
	}
	return name, nil
}

func checkBody(body string, b64 bool) error {
	if len(body) > maxBodyBytes*2 {
		return &badRequest{"body too large"}
	}
	data := []byte(body)
	if b64 {
		var err error
		if data, err = base64.StdEncoding.DecodeString(body); err != nil {
			return &badRequest{"body is not valid base64"}
		}
	}
	if len(data) > maxBodyBytes {
		return &badRequest{"body too large"}
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return &badRequest{"body must be empty or a JSON object"}
	}
	if len(obj) > 0 {
		return &badRequest{"body takes no fields"}
	}
	return nil
}
