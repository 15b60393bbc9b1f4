package config

import (
	"errors"
	"strings"
	"testing"
)

// The source's certificate fields follow the destination's rules, and a URL
// that switches TLS off contradicts them.
func TestSourceTLSRules(t *testing.T) {
	ca, cert, key, otherKey := testPKI(t)
	mysql := func(c *Config, url string) { c.Source.Type = SourceMySQL; c.Source.URL = url }
	mongo := func(c *Config, url string) { c.Source.Type = SourceMongoDB; c.Source.URL = url }
	for _, tc := range []struct {
		name   string
		change func(c *Config)
		field  string
		rule   string
	}{
		{"ca is a path", func(c *Config) { c.Source.CACertificate = "/etc/ssl/rds-ca.pem" }, "source.ca_certificate", "not a file path"},
		{"ca bad pem", func(c *Config) {
			c.Source.CACertificate = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
		}, "source.ca_certificate", "does not parse"},
		{"cert without key", func(c *Config) { c.Source.ClientCertificate = cert }, "source.client_key", "required with client_certificate"},
		{"key without cert", func(c *Config) { c.Source.ClientKey = key }, "source.client_certificate", "required with client_key"},
		{"key mismatch", func(c *Config) { c.Source.ClientCertificate = cert; c.Source.ClientKey = otherKey }, "source.client_key", "does not match"},
		{"key is a path", func(c *Config) { c.Source.ClientCertificate = cert; c.Source.ClientKey = "client.key" }, "source.client_key", "not a file path"},
		{"pg sslmode disable", func(c *Config) {
			c.Source.URL = "postgres://u@db:5432/shop?sslmode=disable"
			c.Source.CACertificate = ca
		}, "source.ca_certificate", "sslmode=disable"},
		{"pg sslrootcert too", func(c *Config) {
			c.Source.URL = "postgres://u@db:5432/shop?sslmode=verify-full&sslrootcert=/ca.pem"
			c.Source.CACertificate = ca
		}, "source.ca_certificate", "remove sslrootcert"},
		{"pg sslrootcert with a client certificate", func(c *Config) {
			c.Source.URL = "postgres://u@db:5432/shop?sslmode=verify-full&sslrootcert=/ca.pem"
			c.Source.ClientCertificate, c.Source.ClientKey = cert, key
		}, "source.ca_certificate", "remove sslrootcert"},
		{"pg sslcert too", func(c *Config) {
			c.Source.URL = "postgres://u@db:5432/shop?sslcert=/c.pem&sslkey=/k.pem"
			c.Source.ClientCertificate, c.Source.ClientKey = cert, key
		}, "source.client_certificate", "remove sslcert"},
		{"mysql tls false", func(c *Config) {
			mysql(c, "mysql://u@db:3306/shop?tls=false")
			c.Source.CACertificate = ca
		}, "source.ca_certificate", "tls=false"},
		{"mongodb cert without key", func(c *Config) {
			mongo(c, "mongodb://db:27017/?tls=true&authMechanism=MONGODB-X509")
			c.Source.ClientCertificate = cert
		}, "source.client_key", "required with client_certificate"},
		{"mongodb key without cert", func(c *Config) {
			mongo(c, "mongodb://u@db:27017/?tls=true")
			c.Source.ClientKey = key
		}, "source.client_certificate", "required with client_key"},
		{"mongodb x509 without a certificate", func(c *Config) {
			mongo(c, "mongodb://db:27017/?tls=true&authMechanism=MONGODB-X509")
		}, "source.client_certificate", "required by authMechanism=MONGODB-X509"},
		{"mongodb x509 with a password", func(c *Config) {
			mongo(c, "mongodb://u:pw@db:27017/?tls=true&authMechanism=MONGODB-X509")
			c.Source.ClientCertificate, c.Source.ClientKey = cert, key
		}, "source.url", "remove the password"},
		{"mongodb tls false", func(c *Config) {
			mongo(c, "mongodb://u@db:27017/?tls=false")
			c.Source.ClientCertificate, c.Source.ClientKey = cert, key
		}, "source.client_certificate", "tls=false"},
		{"mongodb key file in the url", func(c *Config) {
			mongo(c, "mongodb://db:27017/?tls=true&authMechanism=MONGODB-X509&tlsCertificateKeyFile=/c.pem")
			c.Source.ClientCertificate, c.Source.ClientKey = cert, key
		}, "source.url", "source.client_certificate and source.client_key instead"},
		{"other source type", func(c *Config) {
			c.Source.Type, c.Source.URL = SourceSQLServer, "sqlserver://db/shop"
			c.Source.CACertificate = ca
		}, "source.ca_certificate", "postgres, mysql and mongodb sources only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := validConfig(t)
			tc.change(&c)
			err := c.Validate()
			var errs *Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want problems, got: %v", err)
			}
			// One problem names the field; any other is the source type
			// itself (sqlserver: not built in this release).
			var mine []Problem
			for _, p := range errs.Problems {
				switch p.Field {
				case tc.field:
					mine = append(mine, p)
				case "source.type":
				default:
					t.Fatalf("unexpected problem %q", p)
				}
			}
			if len(mine) != 1 || !strings.Contains(mine[0].Message, tc.rule) {
				t.Fatalf("got %v, want one problem of %s with %q", errs.Problems, tc.field, tc.rule)
			}
			for _, pem := range []string{ca, cert, key, otherKey} {
				if body := strings.Split(pem, "\n")[1]; strings.Contains(err.Error(), body) {
					t.Fatal("the message quotes PEM text")
				}
			}
		})
	}
}

// A mongodb source signs in by its client certificate (X.509): with the
// certificate, its key and the CA, the document is valid.
func TestMongoDBClientCertificateAccepted(t *testing.T) {
	ca, cert, key, _ := testPKI(t)
	c := validConfig(t)
	c.Source.Type, c.Source.URL = SourceMongoDB, "mongodb://db1:27017,db2:27017/?replicaSet=rs0&tls=true&authMechanism=MONGODB-X509"
	c.Source.CACertificate, c.Source.ClientCertificate, c.Source.ClientKey = ca, cert, key
	var errs *Errors
	if err := c.Validate(); errors.As(err, &errs) {
		for _, p := range errs.Problems {
			if strings.HasPrefix(p.Field, "source.") {
				t.Errorf("problem %s", p)
			}
		}
	} else if err != nil {
		t.Fatal(err)
	}
}

func TestSourceTLSSettings(t *testing.T) {
	ca, cert, key, _ := testPKI(t)
	for _, tc := range []struct {
		name              string
		typ, url, ca      string
		mtls              bool
		enabled, hostName bool
	}{
		{"pg no tls fields", SourcePostgres, "postgres://u@db/shop", "", false, false, true},
		{"pg require keeps the driver", SourcePostgres, "postgres://u@db/shop?sslmode=require", "", false, false, true},
		{"pg verify-full", SourcePostgres, "postgres://u@db/shop?sslmode=verify-full", "", false, true, true},
		{"pg sslrootcert is the driver's", SourcePostgres, "postgres://u@db/shop?sslmode=verify-full&sslrootcert=/ca.pem", "", false, false, true},
		{"pg verify-ca", SourcePostgres, "postgres://u@db/shop?sslmode=verify-ca", "", false, true, false},
		{"pg ca makes verify-full", SourcePostgres, "postgres://u@db/shop?sslmode=require", ca, false, true, true},
		{"pg ca with verify-ca is still full", SourcePostgres, "postgres://u@db/shop?sslmode=verify-ca", ca, false, true, true},
		{"pg client cert alone", SourcePostgres, "postgres://u@db/shop", "", true, true, true},
		{"mysql plain", SourceMySQL, "mysql://u@db/shop", "", false, false, true},
		{"mysql tls=true", SourceMySQL, "mysql://u@db/shop?tls=true", "", false, true, true},
		{"mysql ca", SourceMySQL, "mysql://u@db/shop", ca, false, true, true},
		{"mongodb client cert", SourceMongoDB, "mongodb://db:27017/?authMechanism=MONGODB-X509", ca, true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Source{Type: tc.typ, URL: tc.url, CACertificate: tc.ca}
			if tc.mtls {
				s.ClientCertificate, s.ClientKey = cert, key
			}
			got, err := SourceTLSSettings(s)
			if err != nil {
				t.Fatal(err)
			}
			if got.Enabled != tc.enabled || (got.Enabled && got.HostName != tc.hostName) {
				t.Fatalf("enabled %v host name %v, want %v %v", got.Enabled, got.HostName, tc.enabled, tc.hostName)
			}
			if (got.Roots != nil) != (tc.ca != "") || (len(got.Certificates) == 1) != tc.mtls {
				t.Fatalf("roots %v, certificates %d", got.Roots != nil, len(got.Certificates))
			}
		})
	}
}

func TestSourceClientKeyRedacted(t *testing.T) {
	c := validConfig(t)
	c.Source.ClientKey = "key-" + canary
	if got := c.Redacted().Source.ClientKey; got != RedactedValue {
		t.Fatalf("source.client_key %q after Redacted", got)
	}
}
