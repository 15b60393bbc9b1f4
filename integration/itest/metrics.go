package itest

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FreeAddr returns a 127.0.0.1 address with a port nothing listens on.
func FreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Scrape returns the body of GET /metrics ("" while nothing listens).
func Scrape(t *testing.T, addr string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("GET /metrics: %s %q", resp.Status, resp.Header.Get("Content-Type"))
	}
	return string(b)
}

// Samples returns the values of name's series whose labels contain
// filter, by their op label ("" when there is none).
func Samples(body, name, filter string) map[string]float64 {
	out := map[string]float64{}
	for _, l := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(l, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') || !strings.Contains(rest, filter) {
			continue
		}
		i := strings.LastIndexByte(rest, ' ')
		v, err := strconv.ParseFloat(rest[i+1:], 64)
		if err != nil {
			continue
		}
		op := ""
		if j := strings.Index(rest, `op="`); j >= 0 {
			op = rest[j+4 : j+5]
		}
		out[op] += v
	}
	return out
}
