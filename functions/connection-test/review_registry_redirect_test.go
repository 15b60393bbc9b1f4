package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

// TestRegistryRedirectStaysOnAllowedHost: the stack allows a pipeline's
// test to reach 127.0.0.1 only. Its registry (on 127.0.0.1) answers with a
// redirect to another host (127.0.0.2, standing for an internal service
// the stack does not allow), and, with a username and password, to another
// port of its own host over http. The connection test must follow
// neither: the other host gets no request, the other port no credentials,
// and the internal service's answer does not come back to the caller.
func TestRegistryRedirectStaysOnAllowedHost(t *testing.T) {
	type hit struct{ auth string }
	var mu sync.Mutex
	hits := map[string][]hit{}
	serve := func(addr, name string, h http.HandlerFunc) string {
		t.Helper()
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatalf("listen on %s: %v", addr, err)
		}
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits[name] = append(hits[name], hit{r.Header.Get("Authorization")})
			mu.Unlock()
			h(w, r)
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return ln.Addr().String()
	}
	internal := serve("127.0.0.2:0", "internal", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "INTERNAL-ONLY-7731 admin page", http.StatusInternalServerError)
	})
	otherPort := serve("127.0.0.1:0", "otherport", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`[]`))
	})
	toInternal := serve("127.0.0.1:0", "registry", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+internal+r.URL.Path, http.StatusTemporaryRedirect)
	})
	toOtherPort := serve("127.0.0.1:0", "registry2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+otherPort+r.URL.Path, http.StatusFound)
	})

	client, root, prefix, put := ssmRoot(t, "ct-redir-")
	db := shopDatabase(t)
	for name, reg := range map[string]string{
		"redirinternal": `{type: confluent, url: "http://` + toInternal + `"}`,
		"redirport":     `{type: confluent, url: "http://` + toOtherPort + `", username: u, password: "${ssm:%s}"}`,
		"namedloop":     `{type: confluent, url: "http://localhost:8081/apis/ccompat/v7"}`,
	} {
		secret := root + name + "/secret"
		put(root+name+"/pg", "postgres", ssmtypes.ParameterTypeSecureString)
		put(secret, canary, ssmtypes.ParameterTypeSecureString)
		put(prefix+name, "name: "+name+"\n"+
			"source: {type: postgres, url: \"postgres://postgres:${ssm:"+root+name+"/pg}@127.0.0.1:5432/"+db+"\"}\n"+
			"destination: {topic_prefix: "+name+", bootstrap_servers: \"127.0.0.1:9092\", disable_tls: true}\n"+
			"format: {key: avro, value: avro, schema_registry: "+strings.Replace(reg, "%s", secret, 1)+"}\n", ssmtypes.ParameterTypeString)
	}
	var logs bytes.Buffer
	h := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	// The tests' services are on loopback: this handler may reach it, and
	// the stack allows each pipeline 127.0.0.1 alone.
	h.dial = dialguard.Dialer(dialTimeout, true)
	h.targets = targets{
		hosts:             map[string][]string{"redirinternal": {"127.0.0.1"}, "redirport": {"127.0.0.1"}},
		plaintextLoopback: true,
	}
	for _, name := range []string{"redirinternal", "redirport"} {
		req := sampleRequest(t)
		req.RawPath = "/pipelines/" + name + "/connection-test"
		req.RequestContext.HTTP.Path = req.RawPath
		req.PathParameters = map[string]string{"name": name}
		res, err := h.Handle(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var r response
		if err := json.Unmarshal([]byte(res.Body), &r); err != nil {
			t.Fatalf("%s: %v: %s", name, err, res.Body)
		}
		if res.StatusCode != 200 || len(r.Registry) != 1 {
			t.Fatalf("%s: %d %s, want 200 with a schema registry line", name, res.StatusCode, res.Body)
		}
		if strings.Contains(res.Body, "INTERNAL-ONLY") {
			t.Errorf("%s: the answer of a host the stack does not allow came back to the caller: %s", name, res.Body)
		}
		if r.Registry[0].OK {
			t.Errorf("%s: a registry that redirects elsewhere passed: %s", name, res.Body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := len(hits["internal"]); n > 0 {
		t.Errorf("the connection test followed the registry's redirect to %s, a host the stack does not allow (%d requests)", internal, n)
	}
	for _, x := range hits["otherport"] {
		if x.auth != "" {
			t.Errorf("the registry's credentials went to %s, where the registry redirected over http", otherPort)
		}
	}
	// A name that resolves to loopback is refused by the function's own
	// dialer as 127.0.0.1 is.
	guarded := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	guarded.targets.plaintextLoopback = true
	req := sampleRequest(t)
	req.RawPath = "/pipelines/namedloop/connection-test"
	req.RequestContext.HTTP.Path = req.RawPath
	req.PathParameters = map[string]string{"name": "namedloop"}
	res, err := guarded.Handle(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var r response
	if err := json.Unmarshal([]byte(res.Body), &r); err != nil || len(r.Registry) != 1 || r.Registry[0].OK || !strings.Contains(r.Registry[0].Detail, "loopback") {
		t.Errorf("localhost's registry through the guarded dialer: %s", res.Body)
	}
	if strings.Contains(logs.String(), "CANARY") {
		t.Errorf("logs hold the registry's secret:\n%s", logs.String())
	}
}
