// Package integration holds Tributary's end-to-end tests, one package per
// concern: scenario (scenarios run on every source, the oracles), delivery
// (crashes, the checkpoint, exactly-once), postgres and mysql (what one
// source has), kafka, cli, aws, tls, and faults (the fault suites on the
// private servers and the three-broker cluster). They
// run the real binary against the real services that `make services-up`
// starts on 127.0.0.1 (Kafka on 9092, PostgreSQL on 5432, MariaDB on 3306,
// moto on 5000) and are skipped with `go test -short`; itest is their
// shared harness, services/ has the scripts that start those services
// (docs/testing.md).
package integration
