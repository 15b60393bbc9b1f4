package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

func sampleRequest(t testing.TB) events.APIGatewayV2HTTPRequest {
	t.Helper()
	data, err := os.ReadFile("../../events/apigw-connection-test.json")
	if err != nil {
		t.Fatal(err)
	}
	var req events.APIGatewayV2HTTPRequest
	if err := json.Unmarshal(data, &req); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestParseRequest(t *testing.T) {
	req := sampleRequest(t)
	if name, err := parseRequest(req); err != nil || name != "shop" {
		t.Fatalf("sample: %q %v", name, err)
	}
	for _, tc := range []struct {
		label string
		edit  func(r *events.APIGatewayV2HTTPRequest)
		want  string // "" = accepted
	}{
		{"empty object body", func(r *events.APIGatewayV2HTTPRequest) { r.Body = " {} " }, ""},
		{"base64 body", func(r *events.APIGatewayV2HTTPRequest) {
			r.Body, r.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte("{}")), true
		}, ""},
		{"no path parameters", func(r *events.APIGatewayV2HTTPRequest) { r.PathParameters = nil }, ""},
		{"GET", func(r *events.APIGatewayV2HTTPRequest) { r.RequestContext.HTTP.Method = "GET" }, "method must be POST"},
		{"other path", func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/shop" }, "path must be"},
		{"nested", func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/a/b/connection-test" }, "pipeline name must match"},
		{"traversal", func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/../connection-test" }, "pipeline name must match"},
		{"encoded", func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/sh%2Fop/connection-test" }, "pipeline name must match"},
		{"upper case", func(r *events.APIGatewayV2HTTPRequest) { r.RawPath = "/pipelines/Shop/connection-test" }, "pipeline name must match"},
		{"mismatch", func(r *events.APIGatewayV2HTTPRequest) { r.PathParameters["name"] = "other" }, "does not match"},
		{"fields", func(r *events.APIGatewayV2HTTPRequest) { r.Body = `{"bootstrap_servers":"x"}` }, "takes no fields"},
		{"array", func(r *events.APIGatewayV2HTTPRequest) { r.Body = `[]` }, "empty or a JSON object"},
		{"null", func(r *events.APIGatewayV2HTTPRequest) { r.Body = `null` }, "empty or a JSON object"},
		{"bad base64", func(r *events.APIGatewayV2HTTPRequest) { r.Body, r.IsBase64Encoded = "!!", true }, "base64"},
		{"huge", func(r *events.APIGatewayV2HTTPRequest) { r.Body = "{" + strings.Repeat(" ", 1<<20) + "}" }, "too large"},
	} {
		r := sampleRequest(t)
		tc.edit(&r)
		_, err := parseRequest(r)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.label, err, tc.want)
		}
	}
}

// FuzzParseRequest: method, path, path parameter and body come from the
// caller. parseRequest must not panic, must accept only well-formed names,
// and must never echo the request in its error.
func FuzzParseRequest(f *testing.F) {
	f.Add("POST", "/pipelines/shop/connection-test", "shop", "", false)
	f.Add("POST", "/pipelines/shop/connection-test", "shop", "{}", false)
	f.Add("POST", "/pipelines/a-b_1/connection-test", "", "e30=", true)
	f.Add("PUT", "/pipelines//connection-test", "x", "[1]", false)
	f.Add("POST", "/pipelines/shop/connection-test/connection-test", "shop", `{"a":1}`, false)
	f.Fuzz(func(t *testing.T, method, path, param, body string, b64 bool) {
		req := events.APIGatewayV2HTTPRequest{RawPath: path, Body: body, IsBase64Encoded: b64}
		req.RequestContext.HTTP.Method = method
		if param != "" {
			req.PathParameters = map[string]string{"name": param}
		}
		name, err := parseRequest(req)
		if err != nil {
			for _, s := range []string{path, body, param} {
				if len(s) >= 6 && strings.Contains(err.Error(), s) {
					t.Fatalf("error echoes the request: %v", err)
				}
			}
			return
		}
		if !pipelineName.MatchString(name) || path != "/pipelines/"+name+"/connection-test" || method != "POST" {
			t.Fatalf("accepted %q for %s %q", name, method, path)
		}
	})
}
