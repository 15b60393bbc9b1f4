package avro

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Confluent is a Confluent-compatible schema registry (Confluent, Apicurio's
// ccompat API, Karapace, Redpanda), with subjects named by
// TopicNameStrategy and records in Confluent's wire format: a 0 byte, the
// schema id as 4 bytes big-endian, then the Avro binary.
type Confluent struct {
	url      string
	username string
	password string
	client   *http.Client
	calls    Calls
}

// ConfluentOptions configure a Confluent client.
type ConfluentOptions struct {
	URL                string // the API's base, e.g. http://host:8081 or …/apis/ccompat/v7
	Username, Password string // HTTP basic authentication, when set
	// CAPEM is the PEM of the certificates that sign the registry's
	// (in addition to the system's), for https URLs.
	CAPEM []byte
	// Timeout bounds one request; default 30 s.
	Timeout time.Duration
	// Dial, when set, makes every connection to the registry (the
	// connection-test function's guarded dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Calls, when set, is told of every request to the registry.
	Calls Calls
}

// NewConfluent returns a client for the registry at o.URL.
func NewConfluent(o ConfluentOptions) (*Confluent, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("schema registry url must be http:// or https:// with a host")
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if o.Dial != nil {
		tr.DialContext = o.Dial
		// A proxy would be dialled instead of the registry, past the
		// dialer's refusals.
		tr.Proxy = nil
	}
	if len(o.CAPEM) > 0 {
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(o.CAPEM) {
			return nil, errors.New("schema registry CA holds no PEM certificate")
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	client := &http.Client{Transport: tr, Timeout: timeout}
	// A redirect to another scheme or host would send the registry's
	// credentials there (Go keeps them on a same-host redirect whatever
	// its port or scheme, so an https registry could hand them to http).
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		first := via[0].URL
		if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return fmt.Errorf("the registry redirected from %s://%s to %s://%s, which Tributary does not follow; set format.schema_registry.url to the URL the registry answers at",
				first.Scheme, first.Host, req.URL.Scheme, req.URL.Host)
		}
		if len(via) >= 10 {
			return errors.New("the registry redirected 10 times")
		}
		return nil
	}
	if o.Dial != nil {
		// The connection-test function may reach the registry's host, one
		// its stack allows: a redirect would take it, and the registry's
		// credentials, to another host or port, and bring that one's
		// answer back to the caller.
		client.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
			return fmt.Errorf("the registry redirected to %s, and the connection test follows no redirect; set format.schema_registry.url to the URL the registry answers at", req.URL.Host)
		}
	}
	return &Confluent{url: strings.TrimRight(o.URL, "/"), username: o.Username, password: o.Password,
		client: client, calls: o.Calls}, nil
}

// Kind implements Registry.
func (c *Confluent) Kind() string { return "confluent" }

// Register implements Registry: POST /subjects/<subject>/versions, which
// returns the id of the schema, new or already there.
func (c *Confluent) Register(ctx context.Context, subject, schema string) ([]byte, error) {
	body, _ := json.Marshal(map[string]string{"schema": schema})
	var out struct {
		ID int64 `json:"id"`
	}
	if err := c.do(ctx, CallRegister, http.MethodPost, "/subjects/"+url.PathEscape(subject)+"/versions", body, &out, subject); err != nil {
		return nil, err
	}
	if out.ID <= 0 || out.ID > 1<<31-1 {
		return nil, fmt.Errorf("schema registry returned schema id %d for %s", out.ID, subject)
	}
	return ConfluentHeader(uint32(out.ID)), nil
}

// SchemaByID returns the schema text of an id (GET /schemas/ids/<id>), as
// a consumer reads it.
func (c *Confluent) SchemaByID(ctx context.Context, id uint32) (string, error) {
	var out struct {
		Schema string `json:"schema"`
	}
	if err := c.do(ctx, CallFetch, http.MethodGet, fmt.Sprintf("/schemas/ids/%d", id), nil, &out, ""); err != nil {
		return "", err
	}
	return out.Schema, nil
}

// ConfluentHeader is the 5 bytes before a record of schema id.
func ConfluentHeader(id uint32) []byte {
	return binary.BigEndian.AppendUint32([]byte{0}, id)
}

// ParseConfluent splits a Confluent-framed record into schema id and Avro
// binary.
func ParseConfluent(rec []byte) (id uint32, body []byte, err error) {
	if len(rec) < 5 || rec[0] != 0 {
		return 0, nil, errors.New("not a Confluent wire-format record (magic byte 0 and a 4-byte schema id)")
	}
	return binary.BigEndian.Uint32(rec[1:5]), rec[5:], nil
}

// do makes one request of kind (CallRegister, …) and tells c.calls of it.
func (c *Confluent) do(ctx context.Context, kind, method, path string, body []byte, out any, subject string) (err error) {
	defer func() { c.calls.count(kind, err) }()
	a, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	if a.status/100 == 2 {
		if err := json.Unmarshal(a.body, out); err != nil {
			return fmt.Errorf("schema registry: reading %s %s: %w", method, path, err)
		}
		return nil
	}
	switch a.status {
	case http.StatusConflict, http.StatusUnprocessableEntity:
		if subject != "" {
			return &RefusedError{Subject: subject, Reason: a.reason}
		}
	case http.StatusUnauthorized, http.StatusForbidden:
		return &DeniedError{Err: fmt.Errorf("schema registry refused the credentials (HTTP %d): %s; check format.schema_registry.username and password", a.status, a.reason)}
	}
	return fmt.Errorf("schema registry: %s %s: HTTP %d: %s", method, path, a.status, a.reason)
}

// answer is a registry's reply: its status, body, and for an error the
// Confluent error code and message (the body's text without them).
type answer struct {
	status int
	body   []byte
	code   int
	reason string
}

// send makes one request; err is only a request that got no answer.
func (c *Confluent) send(ctx context.Context, method, path string, body []byte) (answer, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Accept", "application/vnd.schemaregistry.v1+json, application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/vnd.schemaregistry.v1+json")
	}
	if c.username != "" || c.password != "" {
		req.SetBasicAuth(c.username, c.password)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		// url.Error quotes the URL, which has no credentials (they go in
		// the header).
		return answer{}, fmt.Errorf("schema registry: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := answer{status: resp.StatusCode, body: data}
	if a.status/100 == 2 {
		return a, nil
	}
	var e struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	_ = json.Unmarshal(data, &e)
	a.code, a.reason = e.Code, e.Message
	if a.reason == "" {
		a.reason = strings.TrimSpace(string(data))
	}
	return a, nil
}
