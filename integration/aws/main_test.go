package aws_test

import (
	"testing"

	"github.com/tributary-cdc/tributary/integration/awstest"
	"github.com/tributary-cdc/tributary/integration/itest"
)

// TestMain builds the binary under test once and stops the services the
// tests started (integration/itest/main.go).
func TestMain(m *testing.M) { itest.Main(m) }

// useEngine points this process, and so every binary it starts, at the
// DynamoDB engine eng (for the checkpoint store: these pipelines use no
// other AWS service), with the short leases of itest.UseMoto.
func useEngine(t *testing.T, eng awstest.Engine) {
	t.Helper()
	itest.UseMoto(t)
	awstest.EnvAt(t, eng)
}
