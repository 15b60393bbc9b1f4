package mysql

import (
	"context"
	"testing"
	"time"

	"github.com/tributary-cdc/tributary/pkg/config"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// A server (or a proxy in front of it) that accepts the connection and
// never sends its handshake must not hold a stop: Connect returns once its
// context is done. It waited for ever (go-mysql's handshake reads have no
// deadline), and SIGTERM with it.
func TestConnectStopsOnSilentServer(t *testing.T) {
	s, err := New(context.Background(), source.Options{Pipeline: "silent",
		Config: config.Source{Type: "mysql", URL: "mysql://u:secret@" + silentServer(t).String() + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.Connect(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("Connect to a server that never answered succeeded")
		}
		t.Logf("Connect: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("Connect still waiting for the handshake 10 s after its context ended")
	}
}
