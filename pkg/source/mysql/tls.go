package mysql

import (
	"crypto/tls"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// tlsConfig is the TLS configuration of every connection to the server
// (queries and the binlog alike), or nil for plaintext: TLS is on with
// ?tls=true|preferred in the URL or any of source.ca_certificate /
// client_certificate, and then verified in full against
// source.ca_certificate, or the system roots without it. go-mysql
// requires TLS once given a configuration, so "preferred" means required.
func (s *Source) tlsConfig() (*tls.Config, error) {
	t, err := config.SourceTLSSettings(&s.opts.Config)
	if err != nil || !t.Enabled {
		return nil, err
	}
	return source.TLSConfig(t, s.conn.Host), nil
}

// tlsOption applies tlsConfig to a query connection.
func (s *Source) tlsOption() client.Option {
	return func(c *client.Conn) error {
		cfg, err := s.tlsConfig()
		if cfg != nil {
			c.SetTLSConfig(cfg)
		}
		return err
	}
}
