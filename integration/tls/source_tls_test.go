package tls_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/integration/itest"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"
)

// The TLS-only servers of integration/services/tls-sources.sh, started by
// the first test that needs them: their certificate names IP 127.0.0.1
// only and is signed by the test CA in .services/tls-sources/certs; the
// user tls_cert_user must log in with a client certificate of that CA.
const (
	tlsPGAddr      = "127.0.0.1:5433"
	tlsMariaDBAddr = "127.0.0.1:3307"
)

var tlsSourcesUp struct {
	once sync.Once
	err  error
	out  []byte
}

// tlsSources starts the TLS-only servers (once per test binary) and
// returns the folder of the test certificates.
func tlsSources(t *testing.T) string {
	t.Helper()
	itest.SkipShort(t)
	tlsSourcesUp.once.Do(func() {
		itest.StartedServices.Add("tls-sources.sh")
		cmd := exec.Command("services/tls-sources.sh", "up")
		tlsSourcesUp.out, tlsSourcesUp.err = cmd.CombinedOutput()
	})
	if tlsSourcesUp.err != nil {
		t.Fatalf("integration/services/tls-sources.sh up: %v\n%s", tlsSourcesUp.err, tlsSourcesUp.out)
	}
	return filepath.Join("..", ".services", "tls-sources", "certs")
}

func readCert(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tlsEnv is one test's database on a TLS-only server, a pipeline name and
// a topic prefix; the certificates go to the pipeline through ${env:…}, as
// they would through ${ssm:…}.
type tlsEnv struct {
	*itest.Env
	certs string
}

// sourceYAML writes a pipeline config whose source section is given.
func (e *tlsEnv) writeSource(source string) string {
	cfg := fmt.Sprintf(`name: %s
source:
%sdestination:
  bootstrap_servers: %s
  topic_prefix: %s
  disable_tls: true
  create_missing_topics: true
checkpoint:
  path: %s
`, e.Name, source, itest.KafkaAddr, e.Prefix, filepath.Join(e.Dir, "checkpoints"))
	path := filepath.Join(e.Dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.T.Fatal(err)
	}
	return path
}

// setCerts puts the test material where ${env:TLS_IT_*} finds it.
func (e *tlsEnv) setCerts() {
	e.T.Setenv("TLS_IT_CA", readCert(e.T, e.certs, "ca.pem"))
	e.T.Setenv("TLS_IT_OTHER_CA", readCert(e.T, e.certs, "other-ca.pem"))
	e.T.Setenv("TLS_IT_CLIENT_CERT", readCert(e.T, e.certs, "client.pem"))
	e.T.Setenv("TLS_IT_CLIENT_KEY", readCert(e.T, e.certs, "client.key"))
}

// fails runs the pipeline and waits for it to stop or to log want; the
// output (JSON lines, read with their quotes unescaped) must hold want.
func (e *tlsEnv) fails(cfg, want string) {
	e.T.Helper()
	p := e.Start("run", "--config", cfg)
	output := func() string { return strings.ReplaceAll(p.Out.String(), `\"`, `"`) }
	itest.WaitFor(e.T, 60*time.Second, "the failure "+want, func() bool {
		return p.Exited() || strings.Contains(output(), want)
	})
	if !p.Exited() {
		p.Kill()
	}
	if out := output(); !strings.Contains(out, want) {
		e.T.Fatalf("want %q in the output; got:\n%s", want, out)
	}
}

// streams runs the pipeline until the backfilled rows and then the row
// inserted by insert reach the topic.
func (e *tlsEnv) streams(cfg, topic string, backfilled int, insert func()) {
	e.T.Helper()
	p := e.Start("run", "--config", cfg)
	itest.WaitFor(e.T, 60*time.Second, "the backfilled rows", func() bool {
		if p.Exited() {
			e.T.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topic) >= int64(backfilled)
	})
	insert()
	itest.WaitFor(e.T, 60*time.Second, "the streamed row", func() bool {
		if p.Exited() {
			e.T.Fatalf("tributary exited: %v\n%s", p.Err, p.Out)
		}
		return itest.TopicEnd(topic) >= int64(backfilled)+1
	})
	if code := p.Stop(e.T); code != 0 {
		e.T.Fatalf("exit %d; output:\n%s", code, p.Out)
	}
	// Counted, not ordered: the topic's partitions interleave.
	ops := map[string]int{}
	for _, m := range itest.ReadTopic(e.T, topic) {
		ops[m.Payload()["op"].(string)]++
	}
	if len(ops) != 2 || ops["r"] != backfilled || ops["c"] != 1 {
		e.T.Fatalf("ops %v on %s, want %d r (backfill) and 1 c (streamed)", ops, topic, backfilled)
	}
}

func newTLSEnv(t *testing.T, label string) *tlsEnv {
	certs := tlsSources(t)
	e := &tlsEnv{Env: itest.BareEnv(t, label), certs: certs}
	e.setCerts()
	return e
}

// TestSourceTLSPostgres: with source.ca_certificate, a pipeline streams
// from a PostgreSQL whose certificate only that CA signed (catalog,
// backfill and replication connections, all TLS-only on this server);
// without the CA, with another CA and by a host name the certificate does
// not hold it fails saying which; tls_cert_user logs in by certificate.
func TestSourceTLSPostgres(t *testing.T) {
	e := newTLSEnv(t, "pgtls")
	ctx := context.Background()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(readCert(t, e.certs, "ca.pem")))
	adminURL := func(db string) string {
		return "postgres://postgres:postgres@" + tlsPGAddr + "/" + db + "?sslmode=verify-full"
	}
	connect := func(db string) *pgx.Conn {
		cfg, err := pgx.ParseConfig(adminURL(db))
		if err != nil {
			t.Fatal(err)
		}
		cfg.TLSConfig = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err != nil {
			t.Fatalf("connect to the TLS PostgreSQL: %v", err)
		}
		return conn
	}
	admin := connect("postgres")
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+e.DB); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for i := 0; i < 40; i++ {
			if _, err := admin.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = $1`, e.DB); err == nil {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		admin.Exec(ctx, "DROP DATABASE IF EXISTS "+e.DB+" WITH (FORCE)")
		admin.Close(ctx)
	})
	db := connect(e.DB)
	defer db.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := db.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE TABLE items (id int PRIMARY KEY, v text)")
	exec("INSERT INTO items VALUES (1, 'backfilled')")

	url := func(userHost string) string {
		return "  type: postgres\n  url: postgres://" + userHost + "/" + e.DB + "?sslmode=verify-full\n"
	}
	pw := "postgres:postgres@" + tlsPGAddr
	withCA := "  ca_certificate: ${env:TLS_IT_CA}\n"

	t.Run("no CA", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url(pw)), `untrusted authority ("Tributary test source CA"), not by one of the system's; set source.ca_certificate`)
	})
	t.Run("wrong CA", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url(pw)+"  ca_certificate: ${env:TLS_IT_OTHER_CA}\n"), `untrusted authority ("Tributary test source CA"), not by one in source.ca_certificate`)
	})
	t.Run("wrong host name", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url("postgres:postgres@localhost:5433")+withCA), `wrong host name: it names 127.0.0.1, not "localhost"`)
	})
	t.Run("certificate login without a certificate", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url("tls_cert_user@"+tlsPGAddr)+withCA), "connection requires a valid client certificate")
	})
	t.Run("verified with the CA", func(t *testing.T) {
		e.T = t
		e.streams(e.writeSource(url(pw)+withCA), e.Prefix+".public.items", 1, func() { exec("INSERT INTO items VALUES (2, 'streamed')") })
	})
	t.Run("certificate login", func(t *testing.T) {
		e.T = t
		e.Name += "_cert"
		e.Prefix += "-cert"
		e.streams(e.writeSource(url("tls_cert_user@"+tlsPGAddr)+withCA+
			"  client_certificate: ${env:TLS_IT_CLIENT_CERT}\n  client_key: ${env:TLS_IT_CLIENT_KEY}\n"),
			e.Prefix+".public.items", 2, func() { exec("INSERT INTO items VALUES (3, 'by certificate')") })
	})
}

// TestSourceTLSMariaDB: the same for a MariaDB that accepts TLS only, with
// tls_cert_user declared REQUIRE X509. No tls= in the URL: the CA alone
// turns TLS on.
func TestSourceTLSMariaDB(t *testing.T) {
	e := newTLSEnv(t, "mytls")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM([]byte(readCert(t, e.certs, "ca.pem")))
	my, err := client.Connect(tlsMariaDBAddr, "root", "root", "", func(c *client.Conn) error {
		c.SetTLSConfig(&tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		return nil
	})
	if err != nil {
		t.Fatalf("connect to the TLS MariaDB: %v", err)
	}
	t.Cleanup(func() {
		my.Execute("DROP DATABASE IF EXISTS " + e.DB)
		my.Close()
	})
	exec := func(sql string) {
		t.Helper()
		if _, err := my.Execute(sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("CREATE DATABASE " + e.DB)
	exec("CREATE TABLE " + e.DB + ".items (id INT PRIMARY KEY, v TEXT)")
	exec("INSERT INTO " + e.DB + ".items VALUES (1, 'backfilled')")

	url := func(userHost, params string) string {
		return "  type: mysql\n  url: mysql://" + userHost + "/" + e.DB + params + "\n"
	}
	pw := "root:root@" + tlsMariaDBAddr
	withCA := "  ca_certificate: ${env:TLS_IT_CA}\n"
	topic := func() string { return e.Prefix + "." + e.DB + ".items" }

	t.Run("no CA", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url(pw, "?tls=true")), `untrusted authority ("Tributary test source CA"), not by one of the system's; set source.ca_certificate`)
	})
	t.Run("wrong CA", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url(pw, "")+"  ca_certificate: ${env:TLS_IT_OTHER_CA}\n"), `untrusted authority ("Tributary test source CA"), not by one in source.ca_certificate`)
	})
	t.Run("wrong host name", func(t *testing.T) {
		e.T = t
		e.fails(e.writeSource(url("root:root@localhost:3307", "")+withCA), `wrong host name: it names 127.0.0.1, not "localhost"`)
	})
	t.Run("REQUIRE X509 without a certificate", func(t *testing.T) {
		e.T = t
		// The user's password is its name, so the name is scrubbed from
		// the server's answer like any password.
		e.fails(e.writeSource(url("tls_cert_user:tls_cert_user@"+tlsMariaDBAddr, "")+withCA), "ERROR 1045 (28000): Access denied for user 'REDACTED'")
	})
	t.Run("verified with the CA", func(t *testing.T) {
		e.T = t
		e.streams(e.writeSource(url(pw, "")+withCA), topic(), 1, func() { exec("INSERT INTO " + e.DB + ".items VALUES (2, 'streamed')") })
	})
	t.Run("certificate login", func(t *testing.T) {
		e.T = t
		e.Name += "_cert"
		e.Prefix += "-cert"
		e.streams(e.writeSource(url("tls_cert_user:tls_cert_user@"+tlsMariaDBAddr, "")+withCA+
			"  client_certificate: ${env:TLS_IT_CLIENT_CERT}\n  client_key: ${env:TLS_IT_CLIENT_KEY}\n"),
			topic(), 2, func() { exec("INSERT INTO " + e.DB + ".items VALUES (3, 'by certificate')") })
	})
}
