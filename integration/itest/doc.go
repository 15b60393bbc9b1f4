// Package itest is the shared harness of the integration tests under
// integration/ (docs/testing.md): ordinary Go files in a package that only
// the tests import. Each file holds one concern:
//
//   - main.go: Main, every test package's TestMain (builds the binary,
//     stops the services the package started); SkipShort, ReviewHeld.
//   - env.go, myenv.go: a test's PostgreSQL or MariaDB world (NewEnv,
//     NewMyEnv) and the pipeline configs written in it.
//   - proc.go: the binary under test (Env.Start, Proc) and the waits.
//   - topics.go, kafka_records.go, messages.go: reading topics back, raw
//     records, and the fields of a Debezium message.
//   - kafka_admin.go, kafka_auth.go, kafka_cluster.go: topics and their
//     settings, the secured listeners, the three-broker cluster.
//   - backend.go, backend_postgres.go, backend_mariadb.go: the Backend
//     the scenarios run on (ForEachBackend).
//   - sentinel.go: waiting until a pipeline published a sentinel row.
//   - ledger.go: the ledger writer and its no-gap check (VerifyLedger) of
//     the delivery, fault and lease tests.
//   - checkpoint.go, legacy_checkpoint.go: reading and rewriting file
//     checkpoints.
//   - faults.go, lock.go, cutproxy.go: the private servers of
//     integration/services/faults.sh, the lock that takes them in turns,
//     a TCP proxy that cuts a connection.
//   - dynamo.go: the DynamoDB store on moto.
//   - cli.go, status.go, output.go, row_skipped.go, metrics.go: the other
//     commands of the binary, its status, log lines, row.skipped records
//     and /metrics.
//   - pg.go: PostgreSQL catalog reads.
//   - debezium.go, fidelity.go, fidelity_diff.go, sanitize.go: Debezium
//     run beside Tributary on the same database, and the comparison.
//   - snapshot_mode.go: the database of the snapshot-mode tests.
package itest
