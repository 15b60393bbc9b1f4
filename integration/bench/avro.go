package main

// tributary-avro: the same binary with format.key and format.value avro through the
// Confluent-compatible API of the test registry (Apicurio, `make services-up`). Its
// schema registry requests are read from its /metrics (--http-addr) as a drain ends,
// so the report shows that schemas are cached: a few requests a run, not one a record.

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const registryURL = "http://127.0.0.1:8081/apis/ccompat/v7"

// registryCount is what tributary_schema_registry_requests_total and _errors_total said.
type registryCount struct {
	Register int64 `json:"register"`
	Lookup   int64 `json:"lookup"`
	Fetch    int64 `json:"fetch"`
	Errors   int64 `json:"errors"`
}

func (c *registryCount) total() int64 { return c.Register + c.Lookup + c.Fetch }

func (c *registryCount) String() string {
	return fmt.Sprintf("registry calls %d (register %d, lookup %d, fetch %d; %d failed)", c.total(), c.Register, c.Lookup, c.Fetch, c.Errors)
}

// freeAddr is a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// registryCalls reads the schema registry counters from Tributary's /metrics at addr.
func registryCalls(ctx context.Context, addr string) (*registryCount, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading tributary's metrics: %w", err)
	}
	defer resp.Body.Close()
	return parseRegistryCalls(bufio.NewScanner(resp.Body))
}

// parseRegistryCalls adds up the schema registry series of a Prometheus text exposition;
// an error when it has none (a build without the metric, or not an Avro pipeline).
func parseRegistryCalls(sc *bufio.Scanner) (*registryCount, error) {
	var c registryCount
	found := false
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			continue
		}
		n := int64(v)
		switch name {
		case "tributary_schema_registry_errors_total":
			c.Errors += n
			found = true
		case "tributary_schema_registry_requests_total":
			found = true
			switch {
			case strings.Contains(labels, `kind="register"`):
				c.Register += n
			case strings.Contains(labels, `kind="lookup"`):
				c.Lookup += n
			case strings.Contains(labels, `kind="fetch"`):
				c.Fetch += n
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("tributary's /metrics has no tributary_schema_registry_requests_total")
	}
	return &c, nil
}

// deleteSubjects removes topic's key and value subjects from the registry (soft, then
// permanently, as the Confluent API asks), so runs leave nothing behind.
func deleteSubjects(topic string) {
	for _, s := range []string{topic + "-key", topic + "-value"} {
		for _, q := range []string{"", "?permanent=true"} {
			req, _ := http.NewRequest(http.MethodDelete, registryURL+"/subjects/"+url.PathEscape(s)+q, nil)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}
	}
}
