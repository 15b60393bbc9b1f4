package source

import "github.com/tributary-cdc/tributary/pkg/config"

// Kind is everything database-specific that lives outside a driver's
// capture: one value per database, declared in its driver's package
// (kind.go) and registered with its constructor in pkg/capture/drivers.go.
// The configuration, the commands and the functions ask it instead of
// switching on source.type.
type Kind struct {
	// SourceKind is the source.type, its aliases, its own settings
	// struct and their rules (default settings, URL and settings
	// validation, warnings, TLS from the URL), given to pkg/config when
	// registered.
	config.SourceKind
	// Endpoint reads where source.url connects and whether it may send
	// a password in clear text, for the connection-test function's
	// rules (which hosts a pipeline may reach, secrets only over TLS).
	Endpoint func(s *config.Source) (Endpoint, error)
	// Summary words a checkpointed position for people (status): "LSN
	// 0/16B3748 (slot tributary_shop)"; "" for a position it does not
	// read.
	Summary func(pos []byte) string
	// SoftMemoryLimit is a pipeline's default soft memory limit in bytes
	// (GOMEMLIMIT unset) where it is not the product's, 100 MiB
	// (cmd/tributary/run.go; docs/hot-path.md, "The runtime's settings").
	SoftMemoryLimit int64
}

// Endpoint is where a source.url connects, as the connection-test
// function checks it.
type Endpoint struct {
	// Hosts are every host the URL may connect to (fallbacks included),
	// the first one first.
	Hosts []string
	// Password says the URL sends a password.
	Password bool
	// Plaintext says the URL lets the password go without TLS when no
	// certificate field is set (TLS off or optional, or a fallback
	// without it).
	Plaintext bool
	// RequireTLS ends the sentence that refuses a Plaintext URL, "the
	// connection test sends the database password only over TLS", with
	// how to make the URL require TLS ("; add tls=true to the URL, …").
	RequireTLS string
}
