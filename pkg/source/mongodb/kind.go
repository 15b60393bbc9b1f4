package mongodb

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/connstring"
)

// Type is the source.type of this driver.
const Type = "mongodb"

// Kind is what the configuration, the commands and the functions know of
// a MongoDB source (pkg/capture/drivers.go registers it). Its checks read
// the URI without the network: a mongodb+srv:// URI's hosts are looked up
// only when the driver connects.
var Kind = source.Kind{
	SourceKind: config.SourceKind{
		Type:       Type,
		Database:   "MongoDB",
		Connectors: "Debezium's MongoDB connector",
		Settings:   Settings{},
		Refuses: map[string]string{
			"signal_table": "a mongodb source places its watermarks by operation time",
		},
		Defaults:    func(*config.Source, string) {},
		ValidateURL: validateURL,
		Validate:    validate,
		Warn:        warnURL,
		URLTLS:      urlTLS,
		CheckTLS:    checkTLS,
	},
	Endpoint: endpoint,
	Summary:  summary,
	// Under the product's 100 MiB a backfill's resident memory peaks at
	// 115-117 MB; under 72 MiB at 93-95 MB (docs/hot-path.md, "The
	// runtime's settings").
	SoftMemoryLimit: 72 << 20,
}

// uriParts is what the checks read of a mongodb:// or mongodb+srv:// URI:
// its hosts, whether it holds a password, and its options by lower-cased
// name. The password is never kept.
type uriParts struct {
	srv      bool
	hosts    []string
	password bool
	opts     map[string]string
}

// parseURI reads a URI's parts; its errors never quote the URI.
func parseURI(raw string) (uriParts, error) {
	var p uriParts
	rest, ok := strings.CutPrefix(raw, "mongodb://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "mongodb+srv://"); !ok {
			return p, fmt.Errorf("must be a mongodb:// or mongodb+srv:// URI")
		}
		p.srv = true
	}
	user, hostPart, hasUser := cutUserinfo(rest)
	if hasUser {
		_, pass, has := strings.Cut(user, ":")
		p.password = has && pass != ""
	}
	if i := strings.IndexAny(hostPart, "/?"); i >= 0 {
		hostPart = hostPart[:i]
	}
	if hostPart == "" {
		return p, fmt.Errorf("names no host (mongodb://user@host:27017/?replicaSet=rs0)")
	}
	for _, h := range strings.Split(hostPart, ",") {
		if h == "" {
			return p, fmt.Errorf("has an empty host in its host list")
		}
		p.hosts = append(p.hosts, h)
	}
	if p.srv {
		if len(p.hosts) != 1 || strings.Contains(p.hosts[0], ":") {
			return p, fmt.Errorf("a mongodb+srv:// URI names one host name, without a port")
		}
	}
	p.opts = lowerQuery(raw)
	if pairs := queryPairs(raw); pairs != nil {
		if _, err := url.ParseQuery(strings.Join(pairs, "&")); err != nil {
			return p, fmt.Errorf("has options that are not name=value pairs (value not shown: it may hold a password)")
		}
	}
	return p, nil
}

func validateURL(raw string, r config.Report) {
	p, err := parseURI(raw)
	if err != nil {
		r.Add("source.url", "%s", err)
		return
	}
	// The driver's own parse and checks find what the quick one above
	// lets through (a "/" in the password, a bad option value, options
	// that exclude each other), so validate lists it with every other
	// problem, without the network (checkURI).
	// MONGODB-X509 with a password is the TLS rules' (validate), in
	// their words with the fix.
	var rule *driverRule
	if _, err := checkURI(raw); err != nil && !(errors.As(err, &rule) && strings.EqualFold(p.opts["authmechanism"], "MONGODB-X509") && p.password) {
		// The driver stops at the first option it cannot read: each
		// is read alone so that every bad one is listed (not when the
		// URI's '@' is in question: then which part is the password is).
		var bad []string
		if strings.Count(raw, "@") <= 1 && !errors.As(err, &rule) {
			bad = optionProblems(raw)
		}
		if len(bad) == 0 {
			bad = []string{err.Error()}
		}
		for _, msg := range bad {
			r.Add("source.url", "%s", msg)
		}
	}
	for _, k := range []string{"tlsallowinvalidcertificates", "tlsallowinvalidhostnames", "tlsinsecure", "sslallowinvalidcertificates", "sslallowinvalidhostnames"} {
		if v, ok := p.opts[k]; ok && strings.EqualFold(v, "true") {
			r.Add("source.url", "%s=true turns TLS verification off, which Tributary never does; remove it and give the authority in source.ca_certificate", k)
		}
	}
	if _, ok := p.opts["tlscafile"]; ok {
		r.Add("source.url", "tlsCAFile: give the authority's PEM in source.ca_certificate instead (a file is not there in AWS)")
	}
	for _, k := range []string{"tlscertificatekeyfile", "sslpemkeyfile"} {
		if _, ok := p.opts[k]; ok {
			r.Add("source.url", "%s: give the certificate and its key as PEM in source.client_certificate and source.client_key instead (a file is not there in AWS)", k)
		}
	}
}

// optionProblems are what the driver says of each of raw's options read
// alone, in the URI's order: none when each reads on its own.
func optionProblems(raw string) []string {
	var out []string
	for _, pair := range queryPairs(raw) {
		if name, _, _ := strings.Cut(pair, "="); srvOption(name) {
			continue // a mongodb+srv:// URI's own (checkURI)
		}
		if _, err := connstring.Parse("mongodb://h/?" + pair); err != nil {
			out = append(out, scrub(err.Error(), raw, ""))
		}
	}
	return out
}

// warnURL names the options of source.url the driver does not know: it
// ignores them, and one is most often a misspelt option (replSet for
// replicaSet) whose setting is then silently lost. Their values are not
// shown, nor a name that may be a piece of a secret value split at an
// unescaped '&' (the driver splits there too): one that is not all
// letters, as every option's is, or any in a URL with an option that
// holds a secret.
func warnURL(s *config.Source, warn func(field, message string)) {
	cs, err := checkURI(s.URL)
	if err != nil {
		return
	}
	opts := lowerQuery(s.URL)
	secret := false
	for _, k := range []string{"authmechanismproperties", "tlscertificatekeyfilepassword", "sslpemkeypassword", "proxypassword"} {
		_, unknown := cs.UnknownOptions[k]
		secret = secret || unknown || opts[k] != ""
	}
	seen := map[string]bool{}
	hidden := 0
	for _, pair := range queryPairs(s.URL) {
		raw, _, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(raw)
		lower := strings.ToLower(name)
		if err != nil || cs.UnknownOptions[lower] == nil || seen[lower] {
			continue
		}
		seen[lower] = true
		if secret || !onlyLetters(name) {
			hidden++
			continue
		}
		warn("source.url", fmt.Sprintf("option %q is not a MongoDB connection option the driver knows, and has no effect (%s)", name, optionsDoc))
	}
	if hidden > 0 {
		warn("source.url", fmt.Sprintf("%d option(s) the driver does not know, and which have no effect, are not named: one may be a piece of a value split at an unescaped '&' (write '&' in a value as %%26); check each option's spelling (%s)", hidden, optionsDoc))
	}
}

// optionsDoc lists MongoDB's connection string options.
const optionsDoc = "https://www.mongodb.com/docs/manual/reference/connection-string-options/"

// onlyLetters: name is ASCII letters only, as every connection string
// option's name is.
func onlyLetters(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) < 0
}

// Settings are a mongodb source's own keys of the source section
// (docs/configuration.md).
type Settings struct {
	// CaptureMode is Debezium's capture.mode (docs/mongodb.md); empty is
	// change_streams_update_full.
	CaptureMode string `yaml:"capture_mode" json:"capture_mode"`
	// RenameFields is Debezium's field.renames: entries
	// <database>.<collection>.<field path>:<new name> (fields.go).
	RenameFields []string `yaml:"rename_fields" json:"rename_fields"`
}

func validate(s *config.Source, _ string, r config.Report) {
	if _, ok := captureMode(config.SettingsOf[Settings](*s).CaptureMode); !ok {
		r.Add("source.capture_mode", "must be %s, %s, %s or %s (Debezium's capture.mode)", ModeUpdateFull, ModeUpdateFullWithPreImage, ModeChangeStreams, ModeChangeStreamsPreImage)
	}
	if p, err := parseURI(s.URL); err == nil && strings.EqualFold(p.opts["authmechanism"], "MONGODB-X509") {
		// The server signs the user in by the certificate's subject.
		if s.ClientCertificate == "" {
			r.Add("source.client_certificate", "required by authMechanism=MONGODB-X509 in source.url (the server signs the user in by this certificate)")
		}
		if p.password {
			r.Add("source.url", "authMechanism=MONGODB-X509 signs in by the client certificate: remove the password from the URL")
		}
	}
	fieldSelectorReport(s.ExcludeColumns, config.SettingsOf[Settings](*s).RenameFields, r)
	if len(s.MaskColumns) > 0 {
		r.Add("source.mask_columns", "is not supported for a mongodb source yet")
	}
}

// urlTLS: tls=true (or ssl=true) turns TLS on, verified in full; a
// mongodb+srv:// URI has TLS on unless it says tls=false, as the driver
// has it.
func urlTLS(raw string) (enabled, hostName bool) {
	p, err := parseURI(raw)
	if err != nil {
		return false, true
	}
	return tlsOn(p), true
}

func tlsOn(p uriParts) bool {
	for _, k := range []string{"tls", "ssl"} {
		if v, ok := p.opts[k]; ok {
			return strings.EqualFold(v, "true")
		}
	}
	return p.srv
}

func checkTLS(s *config.Source, r config.Report) {
	p, err := parseURI(s.URL)
	if err != nil {
		return // source.url reports it
	}
	for _, k := range []string{"tls", "ssl"} {
		if v, ok := p.opts[k]; ok && strings.EqualFold(v, "false") {
			if s.CACertificate != "" {
				r.Add("source.ca_certificate", "needs TLS, but source.url has %s=false; remove one of the two", k)
			}
			if s.ClientCertificate != "" {
				r.Add("source.client_certificate", "needs TLS, but source.url has %s=false; remove one of the two", k)
			}
		}
	}
}

func endpoint(s *config.Source) (source.Endpoint, error) {
	p, err := parseURI(s.URL)
	if err != nil {
		return source.Endpoint{}, err
	}
	e := source.Endpoint{Password: p.password, Plaintext: !tlsOn(p) && s.CACertificate == "" && s.ClientCertificate == "",
		RequireTLS: "; add tls=true to the URL, or set source.ca_certificate"}
	for _, h := range p.hosts {
		if _, _, err := net.SplitHostPort(h); err != nil {
			if p.srv {
				h = "_mongodb._tcp." + h // the SRV record the driver resolves
			} else {
				h = net.JoinHostPort(h, "27017")
			}
		}
		e.Hosts = append(e.Hosts, h)
	}
	return e, nil
}

// summary words a checkpointed cursor: its resume token, else its
// operation time.
func summary(pos []byte) string {
	var p struct {
		Token *struct {
			Data string `json:"_data"`
		} `json:"resume_token"`
		Time *opTimeJSON `json:"operation_time"`
	}
	if json.Unmarshal(pos, &p) != nil {
		return ""
	}
	switch {
	case p.Token != nil && p.Token.Data != "":
		return "resume token " + p.Token.Data
	case p.Time != nil:
		return fmt.Sprintf("operation time %d.%d", p.Time.T, p.Time.I)
	}
	return ""
}

// fieldSelectorReport reports each bad entry of source.exclude_columns
// (field.exclude.list) and source.rename_fields (field.renames).
func fieldSelectorReport(exclude, renames []string, r config.Report) {
	for i, e := range exclude {
		if _, err := NewFieldSelector([]string{e}, nil); err != nil {
			r.Add(fmt.Sprintf("source.exclude_columns[%d]", i), "%s", strings.TrimPrefix(err.Error(), "field.exclude.list entry 1: "))
		}
	}
	for i, e := range renames {
		if _, err := NewFieldSelector(nil, []string{e}); err != nil {
			r.Add(fmt.Sprintf("source.rename_fields[%d]", i), "%s", strings.TrimPrefix(err.Error(), "field.renames entry 1: "))
		}
	}
}
