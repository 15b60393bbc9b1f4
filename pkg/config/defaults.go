package config

// Values the fields take when a document leaves them out (docs/configuration.md).
const (
	DefaultAuthentication     = AuthNone
	DefaultMessageCompression = CompressionNone
	DefaultMaxMessageBytes    = 1 << 20 // 1 MiB
	DefaultDeleteMode         = DeleteRecord
	DefaultCheckpointStore    = StoreFile
	DefaultCheckpointPath     = ".tributary"
	DefaultCheckpointTable    = "tributary-checkpoints"
)

// Accepted values of the enumerated fields.
const (
	SourcePostgres  = "postgres"
	SourceMySQL     = "mysql"
	SourceSQLServer = "sqlserver"
	SourceMongoDB   = "mongodb"

	AuthNone        = "NONE"
	AuthPlain       = "PLAIN"
	AuthSCRAMSHA256 = "SCRAM-SHA-256"
	AuthSCRAMSHA512 = "SCRAM-SHA-512"
	AuthAWSMSKIAM   = "AWS_MSK_IAM"

	CompressionNone = "none"
	CompressionGzip = "gzip"

	DeleteRecord             = "record"
	DeleteTombstone          = "tombstone"
	DeleteRecordAndTombstone = "record_and_tombstone"

	StoreFile     = "file"
	StoreDynamoDB = "dynamodb"
)

// ApplyDefaults fills every field left empty with its documented default.
// Parse calls it; call it on a Config built in code before Validate.
func (c *Config) ApplyDefaults() {
	c.canonicalEnums() // enums.go
	d := &c.Destination
	setDefault(&d.Authentication, DefaultAuthentication)
	setDefault(&d.MessageCompression, DefaultMessageCompression)
	setDefault(&d.DeleteMode, DefaultDeleteMode)
	if d.MaxMessageBytes == 0 {
		d.MaxMessageBytes = DefaultMaxMessageBytes
	}
	setDefault(&c.Checkpoint.Store, DefaultCheckpointStore)
	setDefault(&c.Checkpoint.Path, DefaultCheckpointPath)
	setDefault(&c.Checkpoint.Table, DefaultCheckpointTable)
	c.applyDeliveryDefaults()
	if c.Source.Backfill == nil {
		on := true
		c.Source.Backfill = &on
	}
	k, ok := sourceKind(c.Source.Type)
	if !ok {
		return
	}
	c.Source.settle(k)
	// Without a valid name there is no sensible default; Validate reports
	// the name instead of a slot derived from it.
	if k.Defaults != nil && validName.MatchString(c.Name) {
		k.Defaults(&c.Source, c.Name)
	}
}

func setDefault(field *string, value string) {
	if *field == "" {
		*field = value
	}
}
