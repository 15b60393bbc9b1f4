// Package integration holds Tributary's end-to-end tests. They run the real
// binary against the real services that `make services-up` starts on
// 127.0.0.1 (Kafka on 9092, PostgreSQL on 5432) and are skipped with
// `go test -short`. services/ has the scripts that start those services.
package integration
