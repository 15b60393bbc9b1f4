package mysql

import (
	"strings"
	"testing"

	"github.com/tributary-cdc/tributary/pkg/config"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in                         string
		user, pass, host, db, addr string
	}{
		{"mysql://u:p%40ss@db.example.com:3307/shop", "u", "p@ss", "db.example.com", "shop", "db.example.com:3307"},
		{"mariadb://u@127.0.0.1/shop?tls=true", "u", "", "127.0.0.1", "shop", "127.0.0.1:3306"},
		{"u:p@ss:w@tcp(db:3306)/shop?tls=preferred", "u", "p@ss:w", "db", "shop", "db:3306"},
		{"u@tcp([::1]:3310)/", "u", "", "::1", "", "[::1]:3310"},
		{"u:p@/shop", "u", "p", "127.0.0.1", "shop", "127.0.0.1:3306"},
	} {
		c, err := ParseURL(tc.in)
		if err != nil || c.User != tc.user || c.Password != tc.pass || c.Host != tc.host || c.Database != tc.db || c.Addr() != tc.addr {
			t.Errorf("%s: got %+v, %v", tc.in, c, err)
		}
	}
	for _, bad := range []string{
		"postgres://u:secret@h/db", "u:secret@unix(/tmp/s)/db", "u:secret@tcp(h:99999)/db",
		"mysql://u:secret@h/db?tls=skip-verify", "u:secret@tcp(h)", "mysql://u:secret@/db",
	} {
		_, err := ParseURL(bad)
		if err == nil {
			t.Errorf("%s: accepted", bad)
		} else if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: error shows the password: %v", bad, err)
		}
	}
	if a, b := DefaultServerID("shop"), DefaultServerID("shop"); a != b || a < 1<<30 || a >= 1<<31 {
		t.Errorf("DefaultServerID: %d, %d", a, b)
	}
}

func FuzzParseURL(f *testing.F) {
	f.Add("mysql://u:pw@h:3306/db?tls=true")
	f.Add("u:pw@tcp(h:3306)/db?x=1")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseURL(s)
		if err != nil {
			if c.Password != "" && len(c.Password) > 3 && strings.Contains(err.Error(), c.Password) {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		if c.Host == "" || c.Port == 0 {
			t.Fatalf("accepted without host/port: %+v", c)
		}
	})
}

// TestRedactedDSNReadsBack: a redacted MySQL DSN still reads as one, so
// the user sees the rest of it.
func TestRedactedDSNReadsBack(t *testing.T) {
	c, err := ParseURL(config.RedactURL("root:p@ss@tcp(db:3306)/shop"))
	if err != nil || c.Password != config.RedactedValue || c.User != "root" || c.Host != "db" || c.Database != "shop" {
		t.Errorf("redacted DSN reads back as %+v, %v", c, err)
	}
}

// FuzzRedactURL: whatever ParseURL takes as the password of source.url,
// config.RedactURL's output does not hold it, and ParseURL finds no
// password but the redacted mark in the output.
func FuzzRedactURL(f *testing.F) {
	for _, seed := range []string{
		"mysql://root:p%40w@db:3306/shop", "root:p@ss:w/rd@tcp(db:3306)/shop?tls=true",
		"root:hunter2%zz@CANARY7Q:x/y@tcp(db:3306)/shop", "u:a=b@tcp(h)/db", "mariadb://u:pw@h/db",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := config.RedactURL(s)
		if c, err := ParseURL(s); err == nil && c.Password != "" {
			pw, shown := c.Password, 0
			// The password may also be the user name or the host: one
			// occurrence fewer is what the redaction must take out.
			for _, part := range strings.Split(out, config.RedactedValue) {
				shown += strings.Count(part, pw)
			}
			if n := strings.Count(s, pw); n > 0 && shown >= n {
				t.Fatalf("RedactURL(%q) = %q keeps the password %q", s, out, pw)
			}
		}
		if c, err := ParseURL(out); err == nil && c.Password != "" && c.Password != config.RedactedValue {
			t.Fatalf("RedactURL(%q) = %q, which reads as having the password %q", s, out, c.Password)
		}
	})
}
