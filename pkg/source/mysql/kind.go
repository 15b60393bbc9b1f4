package mysql

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Type is the source.type of this driver; mariadb is taken for it: one
// driver reads both servers, and picks the connector name of the server
// it finds.
const Type = "mysql"

// Kind is what the configuration, the commands and the functions know of
// a MySQL / MariaDB source (pkg/capture/drivers.go registers it).
var Kind = source.Kind{
	SourceKind: config.SourceKind{
		Type:    Type,
		Aliases: []string{"mariadb"},
		// Debezium's binlog connectors have no plain adaptive mode.
		TimePrecisions: []string{config.TimeAdaptiveMicroseconds, config.TimeConnect},
		Connectors:     "Debezium's MySQL and MariaDB connectors",
		Defaults:       defaults,
		ValidateURL:    validateURL,
		Validate:       validate,
		Warn:           warn,
		URLTLS:         urlTLS,
		CheckTLS:       checkTLS,
	},
	Endpoint: endpoint,
	Summary:  summary,
}

func defaults(s *config.Source, name string) {
	if s.ServerID == 0 {
		s.ServerID = DefaultServerID(name)
	}
}

func validateURL(url string, r config.Report) {
	if _, err := ParseURL(url); err != nil {
		r.Add("source.url", "%s", err)
	}
}

func validate(s *config.Source, _ string, r config.Report) {
	if t := s.SignalTable; t != "" {
		if db, name, ok := strings.Cut(t, "."); !ok || db == "" || name == "" || strings.Contains(name, ".") {
			r.Add("source.signal_table", "must be db.table, not %s", r.Quote("source.signal_table", t))
		}
	}
}

func warn(s *config.Source, warn func(field, message string)) {
	for _, f := range []struct{ field, value string }{{"source.slot", s.Slot}, {"source.publication", s.Publication}} {
		if f.value != "" {
			warn(f.field, "has no effect on a mysql source (PostgreSQL only)")
		}
	}
}

// urlTLS: tls=true and tls=preferred in the URL turn TLS on, verified in
// full; the source builds its own *tls.Config.
func urlTLS(url string) (enabled, hostName bool) {
	c, err := ParseURL(url)
	if err != nil {
		return false, true
	}
	v := c.Params["tls"]
	return v == "true" || v == "preferred", true
}

func checkTLS(s *config.Source, r config.Report) {
	c, err := ParseURL(s.URL)
	if err != nil {
		return // source.url reports it
	}
	if c.Params["tls"] == "false" {
		for _, f := range []struct{ field, value string }{
			{"source.ca_certificate", s.CACertificate},
			{"source.client_certificate", s.ClientCertificate},
			{"source.client_key", s.ClientKey},
		} {
			if f.value != "" {
				r.Add(f.field, "needs TLS, but source.url has tls=false; remove one of the two")
			}
		}
	}
}

func endpoint(s *config.Source) (source.Endpoint, error) {
	c, err := ParseURL(s.URL)
	if err != nil {
		return source.Endpoint{}, err
	}
	return source.Endpoint{Hosts: []string{c.Host}, Password: c.Password != "", Plaintext: true,
		RequireTLS: "; add tls=true to the URL, or set source.ca_certificate"}, nil
}

// summary words a checkpointed position: its binlog file and position,
// and its GTID set.
func summary(pos []byte) string {
	var p struct {
		File string `json:"file"`
		Pos  *int64 `json:"pos"`
		GTID string `json:"gtid"`
	}
	if json.Unmarshal(pos, &p) != nil || p.File == "" || p.Pos == nil {
		return ""
	}
	s := fmt.Sprintf("binlog %s:%d", p.File, *p.Pos)
	if p.GTID != "" {
		s += ", GTID set " + p.GTID
	}
	return s
}
