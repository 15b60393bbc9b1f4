package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/metrics"
)

// TestMetricsScrubbed: /metrics labels carry topics and tables, which may
// hold a value read through a reference; the answer shows it REDACTED,
// with the registry's status and content type.
func TestMetricsScrubbed(t *testing.T) {
	const secret = "prefixCANARY2718"
	reg := metrics.NewRegistry()
	m := metrics.NewPipeline(reg, "shop")
	m.TopicMissing(secret+".public.orders", true)
	srv := httptest.NewServer(scrubbed(reg.Handler(), config.NewScrubber(secret)))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("status %d, content type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if strings.Contains(string(body), secret) || !strings.Contains(string(body), config.RedactedValue+".public.orders") {
		t.Errorf("metrics hold the secret or not the redacted topic:\n%s", body)
	}
}
