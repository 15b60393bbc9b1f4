package config

import (
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestRedactURLSourceForms covers every form source.url and
// webhooks.row_skipped_url take: the password is gone, and what a reader
// needs to recognise the connection (user, host, database, options) stays.
func TestRedactURLSourceForms(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// PostgreSQL URLs, as pgx reads them (docs/configuration.md).
		{"postgres://u:p%40ss%2Fw0rd@h:5432/db?sslmode=require", "postgres://u:REDACTED@h:5432/db?sslmode=require"},
		{"postgresql://u:p@ss@h/db", "postgresql://u:REDACTED@h/db"},
		{"postgres://u:p#w?x@h/db", "postgres://u:REDACTED@h/db"},
		{"postgres://u:pw@h1:5432,h2:5433/db", "postgres://u:REDACTED@h1:5432,h2:5433/db"},
		{"postgres://u@h/db", "postgres://u@h/db"},
		{"postgres://u:@h/db", "postgres://u:@h/db"},
		{"postgres://h/db?user=u&pass%77ord=p&sslpassword=q", "postgres://h/db?user=u&pass%77ord=REDACTED&sslpassword=REDACTED"},
		// A '/' in an unescaped password ends the host part early: where the
		// password stops cannot be known, so nothing of the string is kept.
		{"postgres://u:12/ab@h/db", "REDACTED"},
		// Key/value conninfo, as libpq and pgx read it.
		{"host=h user=u password=s3cr3t dbname=db", "host=h user=u password=REDACTED dbname=db"},
		{"host=h password = 'it\\'s a s3cr3t' dbname=db", "host=h password = 'REDACTED' dbname=db"},
		{"password=p\\ w@x/y host=h", "password=REDACTED host=h"},
		{"host=h password=", "host=h password="},
		// MySQL / MariaDB URLs.
		{"mysql://root:p%23w@db:3306/shop?tls=true", "mysql://root:REDACTED@db:3306/shop?tls=true"},
		{"mariadb://root:p@ss@db/shop", "mariadb://root:REDACTED@db/shop"},
		// go-sql-driver DSNs: the password runs from the first ':' to the
		// last '@' before the last '/'.
		{"root:pw@tcp(db:3306)/shop?tls=true", "root:REDACTED@tcp(db:3306)/shop?tls=true"},
		{"root:p@ss:w/rd@tcp(db:3306)/shop", "root:REDACTED@tcp(db:3306)/shop"},
		{"root:p'w d=x@tcp(db)/shop", "root:REDACTED@tcp(db)/shop"},
		{"root:pw@/shop", "root:REDACTED@/shop"},
		{"root:pw@tcp(db:3306)", "root:REDACTED@tcp(db:3306)"},
		{"root@tcp(db:3306)/shop", "root@tcp(db:3306)/shop"},
		{"root:@tcp(db:3306)/shop", "root:@tcp(db:3306)/shop"},
		// Webhook URLs.
		{"https://hooks.example.com/t?token=abc&x=1", "https://hooks.example.com/t?token=REDACTED&x=1"},
		{"https://u:pw@hooks.example.com/t", "https://u:REDACTED@hooks.example.com/t"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// The planted secret of the other tests, in a DSN and in a URL.
	for _, in := range []string{"root:" + canary + "@tcp(db:3306)/shop", "mysql://root:" + canary + "@db/shop", "postgres://u:" + canary + "@h/db"} {
		if got := RedactURL(in); strings.Contains(got, "CANARY7Q") || strings.Contains(got, "hunter2") {
			t.Errorf("RedactURL(%q) = %q keeps the password", in, got)
		}
	}
	// A redacted MySQL DSN still reads as one: pkg/source/mysql's
	// TestRedactedDSNReadsBack.
}

// FuzzRedactURL: whatever a reader of source.url (pgx for postgres, net/url
// for webhook URLs) takes as the password, RedactURL's output does not
// hold it, and no reader finds a password in the output. The MySQL
// reader's half is pkg/source/mysql's FuzzRedactURL.
func FuzzRedactURL(f *testing.F) {
	for _, seed := range []string{
		"postgres://u:pw@h:5432/db?sslmode=require&password=x",
		"postgres://u:p@ss@h/db", "postgres://u:12/ss@h/db", "postgres://u@x:pw@h/db",
		"host=h user=u password='a b\\'c' dbname=d", "host=h:1 password=p@w dbname=d/x",
		"mysql://root:p%40w@db:3306/shop", "root:p@ss:w/rd@tcp(db:3306)/shop?tls=true",
		"root:" + canary + "@tcp(db:3306)/shop", "u:a=b@tcp(h)/db", "https://h/hook?token=abc#f",
	} {
		f.Add(seed)
	}
	// pgx falls back to the environment and ~/.pgpass for a password the
	// string does not hold.
	f.Setenv("PGPASSWORD", "")
	f.Setenv("PGPASSFILE", "/nonexistent/pgpass")
	f.Setenv("PGSERVICEFILE", "/nonexistent/pg_service.conf")
	f.Setenv("PGSERVICE", "")
	passwords := func(s string) []string {
		var pws []string
		if c, err := pgconn.ParseConfig(s); err == nil && c.Password != "" {
			pws = append(pws, c.Password)
		}
		if u, err := url.Parse(s); err == nil {
			if pw, ok := u.User.Password(); ok && pw != "" {
				pws = append(pws, pw)
			}
		}
		return pws
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := RedactURL(s)
		for _, pw := range passwords(s) {
			// The password may also be the user name or the host: one
			// occurrence fewer is what the redaction must take out.
			shown := 0
			for _, part := range strings.Split(out, RedactedValue) {
				shown += strings.Count(part, pw)
			}
			if n := strings.Count(s, pw); n > 0 && shown >= n {
				t.Fatalf("RedactURL(%q) = %q keeps the password %q", s, out, pw)
			}
		}
		for _, pw := range passwords(out) {
			if pw != RedactedValue {
				t.Fatalf("RedactURL(%q) = %q, which reads as having the password %q", s, out, pw)
			}
		}
	})
}
