package itest

import (
	"fmt"
	"os"
	"path/filepath"
)

// The three-broker cluster of integration/services/kafka-cluster.sh: node N
// serves clients on 127.0.0.1:19N92 (PLAINTEXT), 19N94 (SASL_SSL) and 19N95
// (mutual TLS); replication factor 3, min.insync.replicas=2.
const ClusterBootstrap = "127.0.0.1:19192,127.0.0.1:19292,127.0.0.1:19392"

// ClusterConfig writes a pipeline config streaming e's database to the
// cluster; destination holds the destination's lines but
// topic_prefix and create_missing_topics ("" means PLAINTEXT).
func (e *Env) ClusterConfig(destination string) string {
	e.T.Helper()
	if destination == "" {
		destination = fmt.Sprintf("  bootstrap_servers: %s\n  disable_tls: true\n", ClusterBootstrap)
	}
	cfg := fmt.Sprintf(`name: %s
source:
  type: postgres
  url: %s
destination:
%s  topic_prefix: %s
  create_missing_topics: true
checkpoint:
  path: %s
`, e.Name, e.PGURL(), destination, e.Prefix, filepath.Join(e.Dir, "checkpoints"))
	path := filepath.Join(e.Dir, "pipeline.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		e.T.Fatal(err)
	}
	return path
}
