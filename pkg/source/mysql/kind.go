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
		Database:       "MySQL",
		Settings:       Settings{},
		Defaults:       defaults,
		ValidateURL:    validateURL,
		Validate:       validate,
		URLTLS:         urlTLS,
		CheckTLS:       checkTLS,
	},
	Endpoint: endpoint,
	Summary:  summary,
}

// Settings are a mysql source's own keys of the source section
// (docs/configuration.md).
type Settings struct {
	// ServerID is the replica server id. Default derived from the
	// pipeline's name (DefaultServerID).
	ServerID uint32 `yaml:"server_id" json:"server_id"`
	// SignalTable ("db.table") is where snapshots write their
	// watermarks; created if missing. Default <URL database>.
	// tributary_signal (else the first listed table's database, else
	// tributary).
	SignalTable string `yaml:"signal_table" json:"signal_table"`
}

// settingsOf are the Settings a driver is given.
func settingsOf(o source.Options) Settings { return config.SettingsOf[Settings](o.Config) }

func defaults(s *config.Source, name string) {
	st := config.SettingsOf[Settings](*s)
	if st.ServerID == 0 {
		st.ServerID = DefaultServerID(name)
	}
	s.Settings = st
}

func validateURL(url string, r config.Report) {
	if _, err := ParseURL(url); err != nil {
		r.Add("source.url", "%s", err)
	}
}

func validate(s *config.Source, _ string, r config.Report) {
	if t := config.SettingsOf[Settings](*s).SignalTable; t != "" {
		if db, name, ok := strings.Cut(t, "."); !ok || db == "" || name == "" || strings.Contains(name, ".") {
			r.Add("source.signal_table", "must be db.table, not %s", r.Quote("source.signal_table", t))
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
		source.CertificatesNeedTLS(s, r, "tls=false")
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
