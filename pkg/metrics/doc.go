// Package metrics counts what a running pipeline does and exposes it two
// ways: Prometheus text exposition (version 0.0.4) over HTTP for a local
// `tributary run --metrics-addr`, and CloudWatch Embedded Metric Format
// (EMF) lines on stdout in ECS, which CloudWatch Logs turns into metrics in
// the namespace Tributary that the CDK dashboard and alarms read.
//
// It promises:
//   - the names below, documented in the README (Metrics), are stable;
//   - recording on the publish path (Rows.Acked, Pipeline.Sent) takes no
//     lock that exposition holds for long and allocates nothing;
//   - no label or property holds anything but the pipeline name, a table
//     name, an op letter, a topic and a partition: never a URL, a
//     credential or a row value.
//
// Names (Prometheus / EMF):
//
//	tributary_rows_published_total{pipeline,table,op}  RowsPublished (Count; dims Pipeline,Op; Table as a property)
//	tributary_source_to_publish_latency_seconds        SourceToPublishLatencyMs (Milliseconds; dim Pipeline)
//	tributary_source_lag_seconds                       SourceLagSeconds (Seconds; dim Pipeline)
//	tributary_errors_total{pipeline,kind}              Errors (Count; dim Pipeline; Kind as a property)
//	tributary_topic_missing{pipeline,topic}            TopicsMissing (Count of topics waited for; dim Pipeline)
//	tributary_receipt_records_total{pipeline,topic,partition}, tributary_receipt_bytes_total{…},
//	tributary_receipt_crc32c{…}                        (Prometheus only: the write receipts, receipts.go)
package metrics
