package config

import (
	"fmt"
	"slices"
	"strings"
)

// Format chooses the shape of the messages: the settings Debezium users set
// on Kafka Connect's JsonConverter, on the ExtractNewRecordState transform
// and on the connector's *.handling.mode options (docs/configuration.md,
// "Message format"). The zero value is Debezium's defaults.
type Format struct {
	// Schemas is JsonConverter's schemas.enable: false writes the key and
	// the value without the {"schema":…,"payload":…} envelope, the payload
	// alone. Default true.
	Schemas *bool `yaml:"schemas" json:"schemas"`
	// Unwrap applies Debezium's ExtractNewRecordState transform: the value
	// is the row itself (the after image), not the change envelope.
	// Default false.
	Unwrap bool `yaml:"unwrap" json:"unwrap"`
	// DeleteHandling is the transform's delete.tombstone.handling.mode,
	// with Unwrap only: tombstone (default), rewrite,
	// rewrite-with-tombstone, drop or delete-to-tombstone.
	DeleteHandling string `yaml:"delete_handling" json:"delete_handling"`
	// AddFields is the transform's add.fields, with Unwrap only: op, table
	// and source.ts_ms, written as __op, __table and __source_ts_ms.
	AddFields []string `yaml:"add_fields" json:"add_fields"`
	// DecimalHandling is the connector's decimal.handling.mode: precise
	// (default), double or string.
	DecimalHandling string `yaml:"decimal_handling" json:"decimal_handling"`
	// TimePrecision is the connector's time.precision.mode: adaptive
	// (PostgreSQL's default), adaptive_time_microseconds (MySQL's default,
	// the only adaptive mode of the binlog connectors) or connect.
	TimePrecision string `yaml:"time_precision" json:"time_precision"`
	// BinaryHandling is the connector's binary.handling.mode: bytes
	// (default), base64 or hex.
	BinaryHandling string `yaml:"binary_handling" json:"binary_handling"`
	// Key and Value are the encoding of the keys and of the values: json
	// (default) or avro, the latter with its schemas registered in
	// SchemaRegistry (schemaregistry.go).
	Key            string         `yaml:"key" json:"key"`
	Value          string         `yaml:"value" json:"value"`
	SchemaRegistry SchemaRegistry `yaml:"schema_registry" json:"schema_registry"`

	// ProvideTransactionMetadata is the connector's
	// provide.transaction.metadata: each streamed change carries its
	// transaction block (id, total_order, data_collection_order) and each
	// transaction's BEGIN and END go to <prefix>.transaction. Default
	// false.
	ProvideTransactionMetadata bool `yaml:"provide_transaction_metadata" json:"provide_transaction_metadata"`
}

// Values of the format keys.
const (
	DeleteHandlingTombstone            = "tombstone"
	DeleteHandlingRewrite              = "rewrite"
	DeleteHandlingRewriteWithTombstone = "rewrite-with-tombstone"
	DeleteHandlingDrop                 = "drop"
	DeleteHandlingDeleteToTombstone    = "delete-to-tombstone"

	DecimalPrecise = "precise"
	DecimalDouble  = "double"
	DecimalString  = "string"

	TimeAdaptive             = "adaptive"
	TimeAdaptiveMicroseconds = "adaptive_time_microseconds"
	TimeConnect              = "connect"

	BinaryBytes  = "bytes"
	BinaryBase64 = "base64"
	BinaryHex    = "hex"

	DefaultDeleteHandling  = DeleteHandlingTombstone
	DefaultDecimalHandling = DecimalPrecise
	DefaultBinaryHandling  = BinaryBytes
)

var (
	deleteHandlings  = []string{DeleteHandlingTombstone, DeleteHandlingRewrite, DeleteHandlingRewriteWithTombstone, DeleteHandlingDrop, DeleteHandlingDeleteToTombstone}
	addFields        = []string{"op", "table", "source.ts_ms"}
	decimalHandlings = []string{DecimalPrecise, DecimalDouble, DecimalString}
	binaryHandlings  = []string{BinaryBytes, BinaryBase64, BinaryHex}
)

// SchemasEnabled reports format.schemas, default true.
func (f Format) SchemasEnabled() bool { return f.Schemas == nil || *f.Schemas }

// DefaultTimePrecision is the time.precision.mode default of a source
// type's Debezium connector.
func DefaultTimePrecision(sourceType string) string {
	return timePrecisions(sourceType)[0]
}

// timePrecisions are the time.precision.mode values of a source type's
// connector, its default first (SourceKind.TimePrecisions).
func timePrecisions(sourceType string) []string {
	if k, ok := sourceKind(sourceType); ok && len(k.TimePrecisions) > 0 {
		return k.TimePrecisions
	}
	return []string{TimeAdaptive, TimeAdaptiveMicroseconds, TimeConnect}
}

// Effective returns f with every key left out set to its default for a
// source type (Validate leaves the document as written: "" means the
// default).
func (f Format) Effective(sourceType string) Format {
	if f.Schemas == nil {
		on := true
		f.Schemas = &on
	}
	if f.Unwrap {
		setDefault(&f.DeleteHandling, DefaultDeleteHandling)
	}
	setDefault(&f.DecimalHandling, DefaultDecimalHandling)
	setDefault(&f.BinaryHandling, DefaultBinaryHandling)
	setDefault(&f.TimePrecision, DefaultTimePrecision(sourceType))
	return f
}

func (v validator) format(c *Config) {
	f := c.Format.Effective(c.Source.Type)
	if c.Format.DeleteHandling != "" {
		switch {
		case !f.Unwrap:
			v.add("format.delete_handling", "applies only with format.unwrap: true (it is ExtractNewRecordState's delete.tombstone.handling.mode); remove it or set format.unwrap: true")
		case f.DeleteHandling == "none":
			v.add("format.delete_handling", "none is Debezium 1.x/2.x's delete.handling.mode; Debezium 3 calls it tombstone (a delete's value is null); must be %s", oneOf(deleteHandlings))
		case !slices.Contains(deleteHandlings, f.DeleteHandling):
			v.add("format.delete_handling", "must be %s", oneOf(deleteHandlings))
		}
	}
	if f.Unwrap && c.Destination.DeleteMode == DeleteTombstone {
		// The transform drops the tombstones the connector sends: every
		// delete would vanish.
		v.add("destination.delete_mode", "tombstone sends no delete event for format.unwrap to shape, and the transform drops tombstones, so deletes would not be published; with format.unwrap use delete_mode record (or record_and_tombstone) and format.delete_handling: delete-to-tombstone for one tombstone per delete")
	}
	if len(f.AddFields) > 0 && !f.Unwrap {
		v.add("format.add_fields", "applies only with format.unwrap: true (it is ExtractNewRecordState's add.fields); remove it or set format.unwrap: true")
	}
	for i, a := range f.AddFields {
		shown := v.quote(fmt.Sprintf("format.add_fields[%d]", i), a)
		if !slices.Contains(addFields, a) {
			v.add("format.add_fields", "entry %d, %s, must be %s", i+1, shown, oneOf(addFields))
		} else if a == "table" && c.Source.Type == SourceMongoDB {
			// ExtractNewDocumentState looks for source.table, which the
			// MongoDB source block does not have, and fails every record.
			v.add("format.add_fields", "entry %d, %s, has no field to add for mongodb sources (their source block names a collection, not a table; Debezium's ExtractNewDocumentState fails on it); use op or source.ts_ms", i+1, shown)
		} else if slices.Index(f.AddFields, a) != i {
			v.add("format.add_fields", "entry %d, %s, is listed twice", i+1, shown)
		}
	}
	if !slices.Contains(decimalHandlings, f.DecimalHandling) {
		v.add("format.decimal_handling", "must be %s", oneOf(decimalHandlings))
	}
	if !slices.Contains(binaryHandlings, f.BinaryHandling) {
		v.add("format.binary_handling", "must be %s", oneOf(binaryHandlings))
	}
	times := timePrecisions(c.Source.Type)
	if !slices.Contains(times, f.TimePrecision) {
		msg := "must be " + oneOf(times)
		if k, _ := sourceKind(c.Source.Type); f.TimePrecision == TimeAdaptive && k.Connectors != "" {
			msg = "adaptive is not a mode of " + k.Connectors + "; " + msg
		}
		v.add("format.time_precision", "%s", msg)
	}
	v.schemaRegistry(c)
}

// oneOf lists values as "a, b or c".
func oneOf(values []string) string {
	if len(values) == 1 {
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
