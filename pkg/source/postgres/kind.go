package postgres

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// Type is the source.type of this driver.
const Type = "postgres"

// Kind is what the configuration, the commands and the functions know of
// a PostgreSQL source (pkg/capture/drivers.go registers it).
var Kind = source.Kind{
	SourceKind: config.SourceKind{
		Type:     Type,
		Database: "PostgreSQL",
		Settings: Settings{},
		Refuses: map[string]string{
			"signal_table": "PostgreSQL writes its watermarks with pg_logical_emit_message",
		},
		Defaults:    defaults,
		ValidateURL: validateURL,
		Validate:    validate,
		URLTLS:      urlTLS,
		CheckTLS:    checkTLS,
	},
	Endpoint: endpoint,
	Summary:  summary,
}

// Settings are a postgres source's own keys of the source section
// (docs/configuration.md).
type Settings struct {
	// Slot is the replication slot. Default tributary_<name>.
	Slot string `yaml:"slot" json:"slot"`
	// Publication is the publication, created if missing. Default
	// tributary_<name>.
	Publication string `yaml:"publication" json:"publication"`
}

// settingsOf are the Settings a driver is given.
func settingsOf(o source.Options) Settings { return config.SettingsOf[Settings](o.Config) }

// derivedName is the default slot and publication of a pipeline.
func derivedName(pipeline string) string {
	return "tributary_" + strings.ReplaceAll(pipeline, "-", "_")
}

func defaults(s *config.Source, name string) {
	st := config.SettingsOf[Settings](*s)
	if st.Slot == "" {
		st.Slot = derivedName(name)
	}
	if st.Publication == "" {
		st.Publication = derivedName(name)
	}
	s.Settings = st
}

var validIdentifier = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func isIdentifierChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_'
}

// validateURL: url.Parse errors quote the whole URL, which may hold a
// password: the messages describe it instead.
func validateURL(raw string, r config.Report) {
	if u, err := url.Parse(raw); err != nil {
		r.Add("source.url", "%s", config.BadURL)
	} else if u.Scheme == "" || u.Opaque != "" {
		r.Add("source.url", "must be a URL such as postgres://user@host/database")
	} else if u.Scheme != "postgres" && u.Scheme != "postgresql" {
		r.Add("source.url", "must start with postgres:// or postgresql:// for a postgres source")
	}
}

func validate(s *config.Source, name string, r config.Report) {
	st := config.SettingsOf[Settings](*s)
	derived := derivedName(name)
	for _, id := range []struct{ field, value string }{
		{"source.slot", st.Slot},
		{"source.publication", st.Publication},
	} {
		switch {
		case id.value == "" || validIdentifier.MatchString(id.value):
		case id.value == derived && len(derived) > 63:
			r.Add(id.field, "the default tributary_<name> is longer than 63 characters; set %s or shorten name", id.field)
		case len(id.value) > 63:
			r.Add(id.field, "is longer than 63 characters (a Postgres identifier limit)")
		default:
			r.Add(id.field, "%s; use lower-case letters, digits and '_' (a Postgres identifier)", r.BadCharacter(id.field, id.value, isIdentifierChar))
		}
	}
}

// urlTLS: verify-full and verify-ca are verified by the source, so the
// error says what failed in words; require, prefer and allow keep the
// driver's behaviour (no verification, as libpq). An sslrootcert file in
// the URL is the driver's to read.
func urlTLS(raw string) (enabled, hostName bool) {
	mode, rootFile := sslParams(raw)
	switch {
	case rootFile != "":
		return false, true
	case mode == "verify-full":
		return true, true
	case mode == "verify-ca":
		return true, false
	}
	return false, true
}

// sslParams returns the sslmode and sslrootcert of a postgres:// URL
// (neither is secret; the rest of the URL may be).
func sslParams(raw string) (mode, rootFile string) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	q := u.Query()
	return q.Get("sslmode"), q.Get("sslrootcert")
}

func checkTLS(s *config.Source, r config.Report) {
	u, err := url.Parse(s.URL)
	if err != nil {
		return // source.url reports it
	}
	q := u.Query()
	if q.Get("sslmode") == "disable" {
		source.CertificatesNeedTLS(s, r, "sslmode=disable")
	}
	if q.Get("sslrootcert") != "" {
		// With any certificate field, the sources verify against
		// ca_certificate (or the system roots), never a file.
		r.Add("source.ca_certificate", "is where the authority goes with the source's certificate fields; move the PEM of sslrootcert (in source.url) here and remove sslrootcert")
	}
	if s.ClientCertificate != "" && (q.Get("sslcert") != "" || q.Get("sslkey") != "") {
		r.Add("source.client_certificate", "and sslcert/sslkey in source.url both give a client certificate; remove sslcert and sslkey")
	}
}

func endpoint(s *config.Source) (source.Endpoint, error) {
	pc, err := pgconn.ParseConfig(s.URL)
	if err != nil {
		return source.Endpoint{}, err
	}
	e := source.Endpoint{Hosts: []string{pc.Host}, Password: pc.Password != "", Plaintext: pc.TLSConfig == nil,
		RequireTLS: ", and this URL lets it go without (sslmode prefer, the default, allow or disable); set sslmode=verify-full (or require, verify-ca), or source.ca_certificate"}
	for _, fb := range pc.Fallbacks {
		e.Hosts = append(e.Hosts, fb.Host)
		e.Plaintext = e.Plaintext || fb.TLSConfig == nil
	}
	return e, nil
}

// summary words a checkpointed position: its LSN and slot.
func summary(pos []byte) string {
	var p struct {
		Slot string `json:"slot"`
		LSN  string `json:"lsn"`
	}
	if json.Unmarshal(pos, &p) != nil || p.LSN == "" {
		return ""
	}
	s := "LSN " + p.LSN
	if p.Slot != "" {
		s += " (slot " + p.Slot + ")"
	}
	return s
}
