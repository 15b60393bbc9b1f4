package config

import "strings"

// The enumerated fields take their values in any case, as Debezium's
// connectors parse theirs (decimal.handling.mode=STRING is string): a
// value that differs from an accepted one only in case is rewritten to
// it before the rules run, so every later comparison sees one spelling.
// source.type also takes the aliases its kind registers (SourceKind).

// canonicalEnums rewrites the enumerated fields to their accepted
// spelling; values that match none are left for the rules to refuse.
func (c *Config) canonicalEnums() {
	canonicalSourceType(&c.Source.Type)
	canonical(&c.Source.Type, SourceSQLServer, SourceMongoDB)
	canonical(&c.Source.SnapshotMode, SnapshotInitial, SnapshotInitialOnly, SnapshotNoData, SnapshotNever, SnapshotWhenNeeded)
	d := &c.Destination
	canonical(&d.Authentication, AuthNone, AuthPlain, AuthSCRAMSHA256, AuthSCRAMSHA512, AuthAWSMSKIAM)
	canonical(&d.MessageCompression, CompressionNone, CompressionGzip)
	canonical(&d.DeleteMode, DeleteRecord, DeleteTombstone, DeleteRecordAndTombstone)
	canonical(&c.Delivery, DeliveryAtLeastOnce, DeliveryExactlyOnce)
	canonical(&c.Checkpoint.Store, StoreFile, StoreDynamoDB)
	canonical(&c.LogLevel, "debug", "info", "warn", "error")
	canonical(&c.LogFormat, LogFormatText, LogFormatJSON)
	f := &c.Format
	canonical(&f.DecimalHandling, DecimalPrecise, DecimalDouble, DecimalString)
	canonical(&f.BinaryHandling, BinaryBytes, BinaryBase64, BinaryHex)
	canonical(&f.TimePrecision, TimeAdaptive, TimeAdaptiveMicroseconds, TimeConnect)
	canonical(&f.DeleteHandling, DeleteHandlingTombstone, DeleteHandlingRewrite, DeleteHandlingRewriteWithTombstone, DeleteHandlingDrop, DeleteHandlingDeleteToTombstone)
}

// canonical sets *field to the value of values it equals but for case.
func canonical(field *string, values ...string) {
	for _, v := range values {
		if *field != v && strings.EqualFold(*field, v) {
			*field = v
			return
		}
	}
}
