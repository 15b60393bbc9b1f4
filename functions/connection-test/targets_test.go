package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/tributary-cdc/tributary/functions/internal/dialguard"
	"github.com/tributary-cdc/tributary/functions/internal/pipelines"
)

// listener records every byte anyone sends to it on loopback; answer, if
// set, serves each connection (it reads what it needs, the rest is
// recorded after it returns).
type listener struct {
	net.Listener
	mu    sync.Mutex
	got   bytes.Buffer
	conns int
}

func listen(t *testing.T, answer func(c net.Conn, rec io.Writer)) *listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &listener{Listener: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			l.mu.Lock()
			l.conns++
			l.mu.Unlock()
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				rec := writerFunc(func(p []byte) (int, error) {
					l.mu.Lock()
					defer l.mu.Unlock()
					return l.got.Write(p)
				})
				r := io.TeeReader(c, rec)
				if answer != nil {
					answer(c, rec)
				}
				io.Copy(io.Discard, r)
			}()
		}
	}()
	return l
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (l *listener) port() string {
	return l.Addr().(*net.TCPAddr).AddrPort().String()[len("127.0.0.1:"):]
}

func (l *listener) seen() (int, string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns, l.got.String()
}

// fakePostgres answers as a PostgreSQL server that has no TLS: 'N' to
// SSLRequest (and GSSENCRequest), then, to the startup message, a request
// for the password in clear text (AuthenticationCleartextPassword). What
// the client sends next is the password, if it sends it.
func fakePostgres(t *testing.T) *listener {
	return listen(t, func(c net.Conn, rec io.Writer) {
		r := io.TeeReader(c, rec)
		for {
			var head [8]byte
			if _, err := io.ReadFull(r, head[:]); err != nil {
				return
			}
			n := binary.BigEndian.Uint32(head[:4])
			code := binary.BigEndian.Uint32(head[4:])
			if code == 80877103 || code == 80877104 { // SSLRequest, GSSENCRequest
				c.Write([]byte{'N'})
				continue
			}
			if n < 8 || n > 10000 {
				return
			}
			io.CopyN(io.Discard, r, int64(n-8))
			c.Write([]byte{'R', 0, 0, 0, 8, 0, 0, 0, 3})
			return
		}
	})
}

// TestSecretsOnlyOverTLSAndOnlyWhereBound replays connection-test
// requests for documents written to get a pipeline's secrets out, or to
// sign in as another pipeline: a PostgreSQL server that refuses TLS (the
// driver's default, sslmode=prefer, then sends the password in clear),
// MySQL and SASL PLAIN without TLS, another pipeline's writer role, and
// hosts the stack does not allow. Each is refused with a status naming
// the field, and the planted secret never reaches the listener.
func TestSecretsOnlyOverTLSAndOnlyWhereBound(t *testing.T) {
	client, root, prefix, put := ssmRoot(t, "ct-tls-")
	pg := fakePostgres(t)
	kafka := listen(t, nil) // a broker that would record a SASL PLAIN password
	db := listen(t, nil)    // a MySQL server that would record the password
	pgURL := func(query string) string { return "postgres://u:${ssm:%s}@127.0.0.1:" + pg.port() + "/db" + query }
	noKafka := `bootstrap_servers: "127.0.0.1:` + kafka.port() + `", disable_tls: true`
	const (
		shopWriter    = "arn:aws:iam::111122223333:role/tributary-writer-shop"
		billingWriter = "arn:aws:iam::111122223333:role/tributary-writer-billing"
	)
	docs := map[string][2]string{ // pipeline → source URL, destination
		"pgdefault": {pgURL(""), noKafka},
		"pgprefer":  {pgURL("?sslmode=prefer"), noKafka},
		"pgallow":   {pgURL("?sslmode=allow"), noKafka},
		"pgdisable": {pgURL("?sslmode=disable"), noKafka},
		"pgrequire": {pgURL("?sslmode=require"), noKafka},
		// The driver takes the last sslmode, the TLS settings the first:
		// either way the connection is TLS or nothing.
		"pgtwice":    {pgURL("?sslmode=verify-full&sslmode=prefer"), noKafka},
		"mysqlnotls": {"mysql://root:${ssm:%s}@127.0.0.1:" + db.port() + "/db", noKafka},
		"plain": {pgURL("?sslmode=verify-full"), `bootstrap_servers: "127.0.0.1:` + kafka.port() + `", disable_tls: true, ` +
			`authentication: PLAIN, username: u, password: "${ssm:%s}"`},
		// shop's document naming billing's writer role (with shop's own
		// external id: billing's is not readable from shop's document).
		"shop": {pgURL("?sslmode=verify-full"), `bootstrap_servers: "127.0.0.1:` + kafka.port() + `", authentication: AWS_MSK_IAM, ` +
			`aws_role_arn: "` + billingWriter + `", external_id: "${ssm:%s}"`},
		"orders": {pgURL("?sslmode=verify-full"), `bootstrap_servers: "127.0.0.1:` + kafka.port() + `", authentication: AWS_MSK_IAM, ` +
			`aws_role_arn: "` + shopWriter + `", external_id: "${ssm:%s}"`},
		"fenced": {pgURL("?sslmode=verify-full"), `bootstrap_servers: "b-1.orders.kafka.us-east-1.amazonaws.com:9098,127.0.0.1:` + kafka.port() + `"`},
	}
	for name, d := range docs {
		secret := root + name + "/secret"
		put(secret, canary, ssmtypes.ParameterTypeSecureString)
		src, dest := d[0], d[1]
		if strings.Contains(src, "%s") {
			src = strings.Replace(src, "%s", secret, 1)
		}
		dest = strings.Replace(dest, "%s", secret, 1)
		typ := "postgres"
		if strings.HasPrefix(src, "mysql") {
			typ = "mysql"
		}
		put(prefix+name, "name: "+name+"\nsource: {type: "+typ+", url: \""+src+"\"}\n"+
			"destination: {topic_prefix: "+name+", "+dest+"}\n", ssmtypes.ParameterTypeString)
	}

	var logs bytes.Buffer
	h := NewHandler(pipelines.New(client, prefix, root, 0), slog.New(slog.NewJSONHandler(&logs, nil)))
	// The listeners are on loopback: this dialer may reach them, so only
	// the checks under test stand between the secret and them.
	h.dial = dialguard.Dialer(dialTimeout, true)
	h.targets = targets{
		writers: map[string]string{"shop": shopWriter, "billing": billingWriter},
		hosts:   map[string][]string{"fenced": {"*.kafka.us-east-1.amazonaws.com", "10.20.0.0/16"}},
	}
	call := func(name string) (int, string) {
		t.Helper()
		req := sampleRequest(t)
		req.RawPath = "/pipelines/" + name + "/connection-test"
		req.RequestContext.HTTP.Path = req.RawPath
		req.PathParameters = map[string]string{"name": name}
		res, err := h.Handle(context.Background(), req)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(res.Body, "CANARY") || !json.Valid([]byte(res.Body)) {
			t.Fatalf("%s: %s", name, res.Body)
		}
		return res.StatusCode, res.Body
	}
	for name, want := range map[string]struct {
		status int
		field  string
	}{
		"pgdefault":  {400, "source.url: the connection test sends the database password only over TLS"},
		"pgprefer":   {400, "source.url: the connection test sends the database password only over TLS"},
		"pgallow":    {400, "source.url: the connection test sends the database password only over TLS"},
		"pgdisable":  {400, "source.url: the connection test sends the database password only over TLS"},
		"mysqlnotls": {400, "source.url: the connection test sends the database password only over TLS; add tls=true"},
		"plain":      {400, "destination.disable_tls: the connection test sends a SASL password only over TLS"},
		"shop":       {403, "destination.aws_role_arn: not the writer role this stack gives pipeline shop (" + shopWriter + ")"},
		"orders":     {403, "destination.aws_role_arn: this stack gives pipeline orders no writer role"},
		"fenced":     {403, "destination.bootstrap_servers: broker 2 is not among the hosts this stack allows pipeline fenced"},
	} {
		code, body := call(name)
		if code != want.status || !strings.Contains(body, want.field) {
			t.Errorf("%s: %d %s, want %d naming %q", name, code, body, want.status, want.field)
		}
		if name == "fenced" && (!strings.Contains(body, "source.url: the database host is not among") || strings.Contains(body, "broker 1")) {
			t.Errorf("fenced: the allowed broker refused or the database host allowed: %s", body)
		}
	}
	// sslmode=require passes (no plaintext fallback): the driver asks for
	// TLS, the server refuses, and the test fails without a password sent.
	for _, name := range []string{"pgrequire", "pgtwice"} {
		code, body := call(name)
		if code != 200 || report(t, body).OK || !strings.Contains(body, `"name":"source connection","ok":false`) {
			t.Errorf("%s: %d %s", name, code, body)
		}
	}
	time.Sleep(200 * time.Millisecond) // what the listeners were sent is in
	if n, got := pg.seen(); n == 0 || strings.Contains(got, "CANARY") {
		t.Errorf("the PostgreSQL server that refuses TLS: %d connections, password received: %v", n, strings.Contains(got, "CANARY"))
	}
	if _, got := kafka.seen(); strings.Contains(got, "CANARY") {
		t.Errorf("the plaintext broker received the SASL password")
	}
	if n, _ := db.seen(); n != 0 {
		t.Errorf("the MySQL server without TLS was connected to %d times", n)
	}
	if strings.Contains(logs.String(), "CANARY") {
		t.Errorf("logs: %s", logs.String())
	}
}

func report(t *testing.T, body string) response {
	t.Helper()
	var r response
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestHostAllowed: names match names and *.domain, addresses match
// addresses and ranges; a name never matches a range.
func TestHostAllowed(t *testing.T) {
	allowed := []string{"db.example.com", "*.kafka.us-east-1.amazonaws.com", "10.20.0.0/16", "192.0.2.7", "2001:db8::/32"}
	for host, want := range map[string]bool{
		"db.example.com": true, "DB.Example.com.": true, "b-1.orders.kafka.us-east-1.amazonaws.com": true,
		"10.20.3.4": true, "192.0.2.7": true, "[2001:db8::1]": true, "::ffff:10.20.0.1": true,
		"kafka.us-east-1.amazonaws.com": false, "evil-kafka.us-east-1.amazonaws.com.example.net": false,
		"xdb.example.com": false, "10.21.0.1": false, "192.0.2.8": false, "10.20.0.1.nip.io": false, "": false,
	} {
		if got := hostAllowed(host, allowed); got != want {
			t.Errorf("hostAllowed(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestTargetsFromEnvironment reads what the stack writes.
func TestTargetsFromEnvironment(t *testing.T) {
	t.Setenv("PIPELINE_WRITER_ROLES", "shop=arn:aws:iam::111122223333:role/w-shop,billing=arn:aws:iam::111122223333:role/w-billing")
	t.Setenv("PIPELINE_ALLOWED_HOSTS", `{"shop":["*.example.com"]}`)
	got, err := targetsFromEnvironment()
	if err != nil || got.writers["billing"] != "arn:aws:iam::111122223333:role/w-billing" || got.hosts["shop"][0] != "*.example.com" || got.plaintextLoopback {
		t.Errorf("%+v %v", got, err)
	}
	t.Setenv("PIPELINE_WRITER_ROLES", "shop")
	if _, err := targetsFromEnvironment(); err == nil {
		t.Errorf("a malformed binding accepted")
	}
	t.Setenv("PIPELINE_WRITER_ROLES", "")
	t.Setenv("PIPELINE_ALLOWED_HOSTS", "")
	if got, err := targetsFromEnvironment(); err != nil || len(got.writers) != 0 || len(got.hosts) != 0 {
		t.Errorf("unset: %+v %v", got, err)
	}
}
