package config

import (
	"crypto/x509"
	"net/url"
	"regexp"
	"slices"
)

// Avro keys and values (format.key, format.value) and the schema registry
// their schemas go to (format.schema_registry); docs/formats.md.

// Values of format.key and format.value.
const (
	EncodingJSON = "json"
	EncodingAvro = "avro"

	RegistryConfluent = "confluent"
	RegistryGlue      = "glue"
)

// SchemaRegistry is format.schema_registry: where the Avro schemas are
// registered, and so how records are framed.
type SchemaRegistry struct {
	// Type is confluent (a Confluent-compatible registry: Confluent,
	// Apicurio's ccompat API, Karapace, Redpanda) or glue (AWS Glue
	// Schema Registry). Required.
	Type string `yaml:"type" json:"type"`

	// confluent: URL is the API's base (http:// or https://); Username and
	// Password sign in with HTTP basic authentication (Password a secret,
	// an ${ssm:…} or ${env:…} reference in practice); CACertificate
	// (PEM) is trusted beside the system's authorities for https.
	URL           string `yaml:"url" json:"url"`
	Username      string `yaml:"username" json:"username"`
	Password      string `yaml:"password" json:"password"` // secret
	CACertificate string `yaml:"ca_certificate" json:"ca_certificate"`

	// glue: RegistryName is the registry (it must exist); Region defaults
	// to the task's (AWS_REGION); RoleARN, when set, is assumed for the
	// registry's calls (with ExternalID, a secret); Compatibility is that
	// of the schemas Tributary creates: BACKWARD by default.
	RegistryName  string `yaml:"registry_name" json:"registry_name"`
	Region        string `yaml:"region" json:"region"`
	RoleARN       string `yaml:"role_arn" json:"role_arn"`
	ExternalID    string `yaml:"external_id" json:"external_id"` // secret
	Compatibility string `yaml:"compatibility" json:"compatibility"`
}

var (
	encodings       = []string{EncodingJSON, EncodingAvro}
	registryTypes   = []string{RegistryConfluent, RegistryGlue}
	glueCompat      = []string{"NONE", "DISABLED", "BACKWARD", "BACKWARD_ALL", "FORWARD", "FORWARD_ALL", "FULL", "FULL_ALL"}
	glueName        = boundedPattern(`^[A-Za-z0-9_$#.-]+$`, 1, 255, nil)
	roleARN         = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/.+$`)
	awsRegionFormat = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-\d$`)
)

// AvroKey and AvroValue report format.key and format.value: avro.
func (f Format) AvroKey() bool   { return f.Key == EncodingAvro }
func (f Format) AvroValue() bool { return f.Value == EncodingAvro }

func (v validator) schemaRegistry(c *Config) {
	f := &c.Format
	for _, k := range []struct{ field, value string }{{"format.key", f.Key}, {"format.value", f.Value}} {
		if k.value != "" && !slices.Contains(encodings, k.value) {
			v.add(k.field, "%s must be %s", v.quote(k.field, k.value), oneOf(encodings))
		}
	}
	avro := f.AvroKey() || f.AvroValue()
	r := &f.SchemaRegistry
	if !avro {
		if r.set() {
			v.add("format.schema_registry", "applies only with format.value: avro or format.key: avro; remove it or set one of them to avro")
		}
		return
	}
	if !f.SchemasEnabled() {
		v.add("format.schemas", "false leaves out the schemas that Avro is written with; remove it (or set it true) with format.key or format.value avro")
	}
	if !r.set() {
		v.add("format.schema_registry", "required with avro: {type: confluent, url: …} or {type: glue, registry_name: …}")
		return
	}
	switch r.Type {
	case RegistryConfluent:
		u, err := url.Parse(r.URL)
		switch {
		case r.URL == "":
			v.add("format.schema_registry.url", "required with type confluent, e.g. https://registry.example.com:8081")
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			v.add("format.schema_registry.url", "%s must be an http:// or https:// URL with a host", v.quote("format.schema_registry.url", r.URL))
		case u.User != nil:
			v.add("format.schema_registry.url", "must not hold credentials; use format.schema_registry.username and password")
		}
		if (r.Username == "") != (r.Password == "") {
			v.add("format.schema_registry.password", "username and password go together (HTTP basic authentication); set both or neither")
		}
		if r.CACertificate != "" {
			if msg := checkPEM(r.CACertificate, "CERTIFICATE"); msg != "" {
				v.add("format.schema_registry.ca_certificate", "%s", msg)
			} else if !x509.NewCertPool().AppendCertsFromPEM([]byte(r.CACertificate)) {
				v.add("format.schema_registry.ca_certificate", "holds no certificate Go can read")
			}
		}
		for _, g := range []struct{ field, value string }{{"registry_name", r.RegistryName}, {"region", r.Region}, {"role_arn", r.RoleARN}, {"external_id", r.ExternalID}, {"compatibility", r.Compatibility}} {
			if g.value != "" {
				v.add("format.schema_registry."+g.field, "applies only with type glue; remove it")
			}
		}
	case RegistryGlue:
		switch {
		case r.RegistryName == "":
			v.add("format.schema_registry.registry_name", "required with type glue: the name of an existing Glue schema registry")
		case !glueName.MatchString(r.RegistryName):
			v.add("format.schema_registry.registry_name", "%s must be 1 to 255 letters, digits and _ $ # . -", v.quote("format.schema_registry.registry_name", r.RegistryName))
		}
		if r.Region != "" && !awsRegionFormat.MatchString(r.Region) {
			v.add("format.schema_registry.region", "%s is not an AWS region name (e.g. eu-west-1)", v.quote("format.schema_registry.region", r.Region))
		}
		if r.RoleARN != "" && !roleARN.MatchString(r.RoleARN) {
			v.add("format.schema_registry.role_arn", "%s is not an IAM role ARN (arn:aws:iam::<account>:role/<name>)", v.quote("format.schema_registry.role_arn", r.RoleARN))
		}
		if r.ExternalID != "" && r.RoleARN == "" {
			v.add("format.schema_registry.external_id", "applies only with role_arn; remove it or set role_arn")
		}
		if r.Compatibility != "" && !slices.Contains(glueCompat, r.Compatibility) {
			v.add("format.schema_registry.compatibility", "%s must be %s", v.quote("format.schema_registry.compatibility", r.Compatibility), oneOf(glueCompat))
		}
		for _, g := range []struct{ field, value string }{{"url", r.URL}, {"username", r.Username}, {"password", r.Password}, {"ca_certificate", r.CACertificate}} {
			if g.value != "" {
				v.add("format.schema_registry."+g.field, "applies only with type confluent; remove it")
			}
		}
	case "":
		v.add("format.schema_registry.type", "required: %s", oneOf(registryTypes))
	default:
		v.add("format.schema_registry.type", "%s must be %s", v.quote("format.schema_registry.type", r.Type), oneOf(registryTypes))
	}
}

// set reports whether format.schema_registry has any key.
func (r *SchemaRegistry) set() bool { return *r != SchemaRegistry{} }

// redactRegistry replaces the secrets of format.schema_registry
// (Config.Redacted, on its copy).
func (f *Format) redactRegistry() {
	for _, secret := range []*string{&f.SchemaRegistry.Password, &f.SchemaRegistry.ExternalID} {
		if *secret != "" {
			*secret = RedactedValue
		}
	}
}

// registrySecrets are the values of the secret fields of
// format.schema_registry that are set (Config.Secrets).
func (f *Format) registrySecrets() []string {
	var out []string
	for _, s := range []string{f.SchemaRegistry.Password, f.SchemaRegistry.ExternalID} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
