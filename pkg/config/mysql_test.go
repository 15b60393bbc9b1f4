package config

import (
	"strings"
	"testing"
)

func TestParseMySQLURL(t *testing.T) {
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
		c, err := ParseMySQLURL(tc.in)
		if err != nil || c.User != tc.user || c.Password != tc.pass || c.Host != tc.host || c.Database != tc.db || c.Addr() != tc.addr {
			t.Errorf("%s: got %+v, %v", tc.in, c, err)
		}
	}
	for _, bad := range []string{
		"postgres://u:secret@h/db", "u:secret@unix(/tmp/s)/db", "u:secret@tcp(h:99999)/db",
		"mysql://u:secret@h/db?tls=skip-verify", "u:secret@tcp(h)", "mysql://u:secret@/db",
	} {
		_, err := ParseMySQLURL(bad)
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

func FuzzParseMySQLURL(f *testing.F) {
	f.Add("mysql://u:pw@h:3306/db?tls=true")
	f.Add("u:pw@tcp(h:3306)/db?x=1")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseMySQLURL(s)
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
