package postgres

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// applyTLS puts the source's TLS settings (source.ca_certificate and the
// client certificate, or sslmode=verify-full / verify-ca without an
// sslrootcert file) into cfg, which every connection copies: catalog,
// backfill and replication alike. TLS is then required: pgx's plaintext
// fallback (sslmode=prefer, the default) is dropped. Without such settings
// cfg keeps what pgx made of the URL.
func applyTLS(cfg *pgx.ConnConfig, s *config.Source) error {
	t, err := config.SourceTLSSettings(s)
	if err != nil || !t.Enabled {
		return err
	}
	cfg.TLSConfig = source.TLSConfig(t, cfg.Host)
	// Fallbacks are the URL's other hosts (each with its own TLS
	// config) and, for prefer/allow, the same host in plaintext.
	var fbs []*pgconn.FallbackConfig
	for _, fb := range cfg.Fallbacks {
		if fb.TLSConfig == nil {
			continue
		}
		fb.TLSConfig = source.TLSConfig(t, fb.Host)
		fbs = append(fbs, fb)
	}
	cfg.Fallbacks = fbs
	return nil
}
