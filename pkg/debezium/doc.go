// Package debezium encodes change events as Debezium JSON: the key and value
// messages that Debezium's connectors emit through Kafka Connect's
// JsonConverter with schemas.enable=true and the default modes
// (decimal.handling.mode=precise, time.precision.mode=adaptive,
// binary.handling.mode=bytes).
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
// Only the PostgreSQL connector's source block is implemented so far.
package debezium
