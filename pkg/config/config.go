// Package config holds a pipeline's typed configuration (docs/configuration.md), its
// validation, and the loaders that read it from a file (YAML or JSON).
// Every validation problem names the field and the rule; all are reported
// at once.
package config

import "time"

// Config is one pipeline document.
type Config struct {
	// Name names the pipeline, its checkpoint, and the default slot and
	// publication. Required; [a-z0-9_-]+.
	Name        string      `yaml:"name" json:"name"`
	Source      Source      `yaml:"source" json:"source"`
	Destination Destination `yaml:"destination" json:"destination"`
	Checkpoint  Checkpoint  `yaml:"checkpoint" json:"checkpoint"`
	Webhooks    Webhooks    `yaml:"webhooks" json:"webhooks"`
	// Delivery is at_least_once (default) or exactly_once (Kafka
	// transactions; see delivery.go).
	Delivery     string       `yaml:"delivery" json:"delivery"`
	Transactions Transactions `yaml:"transactions" json:"transactions"`
	// LogLevel is debug | info | warn | error. Default info; --log-level overrides it.
	LogLevel string `yaml:"log_level" json:"log_level"`
	// LogFormat is text | json. Default: text on a terminal, json otherwise
	// (ECS, files); --log-format overrides it.
	LogFormat string `yaml:"log_format" json:"log_format"`
	// Format is the shape of the messages (format.go); default Debezium's.
	Format Format `yaml:"format" json:"format"`
	// Transforms are the routing transforms (transforms.go); default none.
	Transforms Transforms `yaml:"transforms" json:"transforms"`

	// positions maps a field path to where the document set it, for
	// messages that point at a line; nil for a Config built in code.
	positions map[string]Position
	// references are the fields whose values came through ${env:…} or
	// ${ssm:…} references, and those values (references.go); empty for a
	// Config built in code.
	references references
}

// Source says which database to read and what of it.
type Source struct {
	// Type is a registered source type (postgres, mysql, mongodb).
	// Required. (sqlserver is recognised and refused: not built in this
	// release.)
	Type string `yaml:"type" json:"type"`
	// URL is the connection URL. Required. May hold a secret: never log it.
	URL string `yaml:"url" json:"url"`
	// Tables is an include list: plain names ("schema.table") or
	// Debezium-style regular expressions matched against schema.table
	// (selection.go); default: every table with a primary key.
	Tables []string `yaml:"tables" json:"tables"`
	// ExcludeTables are regular expressions (or names) of tables never
	// captured, Debezium's table.exclude.list. Default none.
	ExcludeTables []string `yaml:"exclude_tables" json:"exclude_tables"`
	// ExcludeColumns are regular expressions over schema.table.column of
	// columns left out of every message, Debezium's column.exclude.list;
	// for mongodb, Debezium's field.exclude.list paths
	// (database.collection.field.path, checked by the driver).
	ExcludeColumns []string `yaml:"exclude_columns" json:"exclude_columns"`
	// MaskColumns masks columns with a salted hash or a fixed replacement
	// (selection.go). Default none.
	MaskColumns []MaskColumns `yaml:"mask_columns" json:"mask_columns"`
	// Backfill publishes existing rows (op r) when the pipeline starts, while
	// it streams. Default true.
	Backfill *bool `yaml:"backfill" json:"backfill"`
	// SnapshotMode is Debezium's snapshot.mode: initial (default),
	// initial_only, no_data (never is its older alias) or when_needed
	// (snapshotmode.go).
	SnapshotMode string `yaml:"snapshot_mode" json:"snapshot_mode"`
	// SnapshotParallelism is how many tables a snapshot reads at once.
	// Default 2 (snapshot.DefaultParallelism).
	SnapshotParallelism int `yaml:"snapshot_parallelism" json:"snapshot_parallelism"`
	// IncludeUnknownTypes publishes columns of types Tributary cannot
	// encode as bytes of their text form (Debezium's
	// include.unknown.datatypes=true). Default false: such columns are left
	// out, with a warning and the tributary_columns_dropped metric.
	IncludeUnknownTypes bool `yaml:"include_unknown_types" json:"include_unknown_types"`
	// CACertificate (PEM) is the only authority a TLS connection to the
	// database trusts; with it, TLS is required and verified in full (chain
	// and host name). ClientCertificate + ClientKey (PEM, the key a secret)
	// log in with a certificate. See sourcetls.go.
	CACertificate     string `yaml:"ca_certificate" json:"ca_certificate"`
	ClientCertificate string `yaml:"client_certificate" json:"client_certificate"`
	ClientKey         string `yaml:"client_key" json:"client_key"`

	// OutageWindow is how long the source keeps reconnecting after it lost
	// its connection before the pipeline exits 1 (a Go duration: "5m",
	// "90s"). Default 5m.
	OutageWindow string `yaml:"outage_window" json:"outage_window"`

	// Settings are the source type's own (source.slot of a postgres
	// source, source.server_id of a mysql one): a value of the struct its
	// SourceKind declares, whose keys sit in this section beside the
	// ones above (settings.go). Parse sets it to that type always.
	Settings SourceSettings `yaml:"-" json:"-"`

	// foreign are the settings a document gave that belong to other
	// source types: each a value of another kind's settings struct, for
	// Warnings (no effect) and the kinds' refusals.
	foreign []SourceSettings
}

// Destination is the Kafka or MSK cluster.
type Destination struct {
	BootstrapServers    string `yaml:"bootstrap_servers" json:"bootstrap_servers"` // comma-separated host:port; required
	TopicPrefix         string `yaml:"topic_prefix" json:"topic_prefix"`           // required; letters, digits, . _ -
	Authentication      string `yaml:"authentication" json:"authentication"`       // default NONE
	Username            string `yaml:"username" json:"username"`
	Password            string `yaml:"password" json:"password"` // secret
	AWSRoleARN          string `yaml:"aws_role_arn" json:"aws_role_arn"`
	ExternalID          string `yaml:"external_id" json:"external_id"` // secret
	AWSRegion           string `yaml:"aws_region" json:"aws_region"`
	DisableTLS          bool   `yaml:"disable_tls" json:"disable_tls"`
	CACertificate       string `yaml:"ca_certificate" json:"ca_certificate"`
	ClientCertificate   string `yaml:"client_certificate" json:"client_certificate"`
	ClientKey           string `yaml:"client_key" json:"client_key"` // secret
	CreateMissingTopics bool   `yaml:"create_missing_topics" json:"create_missing_topics"`
	MessageCompression  string `yaml:"message_compression" json:"message_compression"` // default none
	MaxMessageBytes     int    `yaml:"max_message_bytes" json:"max_message_bytes"`     // default 1048576
	DeleteMode          string `yaml:"delete_mode" json:"delete_mode"`                 // default record

	// The sink settings users tune (sink.go validates them, docs/configuration.md
	// describes them).
	Topic            string              `yaml:"topic" json:"topic"`                             // one topic for every table; never with topic_prefix
	KeyColumns       map[string][]string `yaml:"key_columns" json:"key_columns"`                 // table → key columns (Debezium message.key.columns)
	PartitionColumn  map[string]string   `yaml:"partition_column" json:"partition_column"`       // table → signed integer column picking the partition
	PublishTimeout   string              `yaml:"publish_timeout" json:"publish_timeout"`         // default 30s, >= 1s
	MaxInFlight      int                 `yaml:"max_in_flight" json:"max_in_flight"`             // records buffered; 1..65536
	MaxInFlightBytes int64               `yaml:"max_in_flight_bytes" json:"max_in_flight_bytes"` // bytes buffered; <= 1 GiB
	ClientID         string              `yaml:"client_id" json:"client_id"`                     // default tributary-<name>

	// Heartbeat and TopicCreation are Debezium's heartbeat topic and
	// topic.creation.* groups (topics.go).
	Heartbeat     Heartbeat     `yaml:"heartbeat" json:"heartbeat"`
	TopicCreation TopicCreation `yaml:"topic_creation" json:"topic_creation"`

	// SSHTunnel and PrivateLink are recognised only to be refused with a
	// clear message: Tributary connects to Kafka directly (docs/configuration.md).
	SSHTunnel   any `yaml:"ssh_tunnel,omitempty" json:"ssh_tunnel,omitempty"`
	PrivateLink any `yaml:"private_link,omitempty" json:"private_link,omitempty"`
}

// Checkpoint says where positions are kept.
type Checkpoint struct {
	Store       string `yaml:"store" json:"store"` // file (default) | dynamodb
	Path        string `yaml:"path" json:"path"`   // default .tributary
	Table       string `yaml:"table" json:"table"` // default tributary-checkpoints
	CreateTable bool   `yaml:"create_table" json:"create_table"`
}

// Webhooks configures row.skipped delivery.
type Webhooks struct {
	// RowSkippedURL receives the events: https://, or http:// to a
	// loopback host (a receiver on the same machine) only.
	RowSkippedURL string `yaml:"row_skipped_url" json:"row_skipped_url"`
	// SigningSecret signs every delivery; at least 24 bytes (of the
	// base64-decoded key of a whsec_ secret). Secret.
	SigningSecret string `yaml:"signing_secret" json:"signing_secret"`
	QueueURL      string `yaml:"queue_url" json:"queue_url"`
	// AllowPrivateNetwork lets the row-skipped function (AWS) deliver to
	// a receiver at a private (RFC 1918), shared (100.64.0.0/10) or
	// unique-local (fc00::/7) address; without it only public addresses
	// are dialled. Default false.
	AllowPrivateNetwork bool `yaml:"allow_private_network" json:"allow_private_network"`
}

// OutageWindowDuration is source.outage_window, 0 when unset (the source
// package's default). Validate has checked it parses.
func (s Source) OutageWindowDuration() time.Duration {
	d, _ := time.ParseDuration(s.OutageWindow)
	return d
}

// BackfillEnabled reports whether tables are backfilled when the pipeline
// starts or captures them: source.backfill (default true), unless
// source.snapshot_mode is no_data.
func (s Source) BackfillEnabled() bool {
	return (s.Backfill == nil || *s.Backfill) && s.Snapshot() != SnapshotNoData
}
