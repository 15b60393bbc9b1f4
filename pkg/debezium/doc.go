// Package debezium encodes change events as Debezium JSON: the key and value
// messages that Debezium's connectors emit through Kafka Connect's
// JsonConverter with schemas.enable=true and the default modes
// (decimal.handling.mode=precise, time.precision.mode=adaptive,
// binary.handling.mode=bytes) — and, with Options.Format (format.go), what
// they emit with schemas.enable=false, through ExtractNewRecordState, and
// with the other decimal, time and binary modes.
//
// What it promises:
//   - Schema names, versions, parameters, field order and JSON key order are
//     those of Debezium [Version] and Kafka Connect's JsonConverter, so a
//     consumer written against Debezium reads our messages unchanged.
//   - The schema JSON of a table is built once per *change.Table (a table
//     version) and cached; per row only the payload is encoded, by appending
//     to a caller-owned buffer, without reflection and, when the buffer is
//     reused, without allocation.
//   - A value that cannot be encoded is an error naming the table, column
//     and type (see [EncodeError]); the encoder never panics on bad input and
//     never drops a value silently.
//
// The PostgreSQL output is checked against real Debezium by
// integration/postgres/fidelity_test.go (every type the source maps, snapshot and
// streaming, REPLICA IDENTITY DEFAULT and FULL, TOAST, key changes, ALTER
// TABLE). Known, deliberate differences, where Debezium's own output depends
// on whether a row came from its snapshot or its stream:
//   - date 'infinity'/'-infinity' (Debezium: -622191234 in a snapshot,
//     -2147472692 streamed; we write the days of its timestamp sentinels);
//   - BC dates (Debezium's snapshot goes through java.sql.Date and loses the
//     era; streamed values and ours are proleptic Gregorian);
//   - name columns (Debezium streams them as null; we write the text, as
//     its snapshot does).
package debezium
