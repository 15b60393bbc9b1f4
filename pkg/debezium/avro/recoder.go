package avro

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// Registry registers Avro schemas and says how records of a schema are
// framed: Confluent's or Glue's wire format.
type Registry interface {
	// Register registers schema under subject (once; a schema it has
	// already returns its id) and returns the header that precedes every
	// record of it. A schema the registry refuses is a *RefusedError.
	Register(ctx context.Context, subject, schema string) (header []byte, err error)
	// Kind names the registry in messages: "confluent" or "glue".
	Kind() string
}

// DeniedError is a registry call refused for who makes it: HTTP 401 or
// 403 from a Confluent-compatible registry. (Glue's is AWS's
// AccessDeniedException, which deniedReason reads.)
type DeniedError struct{ Err error }

func (e *DeniedError) Error() string { return e.Err.Error() }
func (e *DeniedError) Unwrap() error { return e.Err }

// deniedReason is the registry's words when err is a refusal of the
// caller (credentials, role), else "".
func deniedReason(err error) string {
	var d *DeniedError
	if errors.As(err, &d) {
		return d.Error()
	}
	return denied(err)
}

// deniedFix is the fix line of a denied registration.
func deniedFix(kind string) string {
	if kind == "glue" {
		return "grant the task role glue:GetRegistry, GetSchemaByDefinition, CreateSchema, RegisterSchemaVersion and GetSchemaVersion on the registry and its schemas (the CDK app grants them with -c glueRegistries); `tributary test-connection` checks it"
	}
	return "give format.schema_registry's user the right to read and register the subjects <topic>-key and <topic>-value; `tributary test-connection` checks it"
}

// Calls is told of each request a registry client makes: kind is
// CallRegister, CallLookup or CallFetch, failed when the request did not
// succeed (unreachable, refused, an HTTP or API error). The pipeline's
// metrics count them, so a reader can see that schemas are cached: a run
// of one schema makes a few calls, not one per record.
type Calls func(kind string, failed bool)

// The kinds of registry request Calls is told of.
const (
	CallRegister = "register" // a schema registered (or its id looked up by registering it again)
	CallLookup   = "lookup"   // a schema or subject looked up without registering
	CallFetch    = "fetch"    // a schema read by its id or version
)

func (c Calls) count(kind string, err error) {
	if c != nil {
		c(kind, err != nil)
	}
}

// RefusedError is a schema the registry would not take (incompatible with
// the subject's earlier versions, or invalid): Reason is the registry's.
type RefusedError struct {
	Subject string
	Reason  string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("the schema registry refused the new schema of subject %s: %s", e.Subject, e.Reason)
}

// Recoder rewrites the Debezium JSON keys and values of pkg/debezium (with
// schemas) as Avro records framed for a registry. Each distinct Connect
// schema is converted and registered once, before the first record that
// needs it; after that a record costs a map lookup and its encoding. Safe
// for concurrent use.
type Recoder struct {
	Registry Registry
	// Key and Value say which of the two are Avro (format.key,
	// format.value); the other passes through as JSON.
	Key, Value bool
	// Log receives the registry's refusals while the pipeline waits.
	Log *slog.Logger
	// RetryEvery is how often a refused or failed registration is tried
	// again; default 5 s. LogEvery is how often the wait is logged;
	// default 30 s.
	RetryEvery, LogEvery time.Duration

	mu      sync.Mutex
	entries map[string]map[string]*entry // subject → Connect schema JSON → entry
	last    map[string]*entry            // subject → the entry of its last record
	// byAddr finds the entry of a Connect schema the Encoder gave by its
	// address (direct.go).
	byAddr map[*byte]*entry
	// Registrations counts the calls to the registry that succeeded.
	registrations int
}

// maxSchemasPerSubject bounds the schemas kept per subject: the
// AvroConverter's cache of converted schemas holds as many by default.
const maxSchemasPerSubject = 1000

type entry struct {
	subject string
	schema  *Schema
	header  []byte
	prefix  []byte // {"schema":<Connect schema>,"payload":
}

// Registrations returns how many schemas this Recoder has registered.
func (r *Recoder) Registrations() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.registrations
}

// RecodeKey returns the Avro form of a key message for topic (subject
// <topic>-key), or msg itself when keys stay JSON or msg is nil.
func (r *Recoder) RecodeKey(ctx context.Context, topic string, msg []byte) ([]byte, error) {
	if !r.Key || msg == nil {
		return msg, nil
	}
	return r.recode(ctx, topic+"-key", msg)
}

// RecodeValue is RecodeKey for values (subject <topic>-value).
func (r *Recoder) RecodeValue(ctx context.Context, topic string, msg []byte) ([]byte, error) {
	if !r.Value || msg == nil {
		return msg, nil
	}
	return r.recode(ctx, topic+"-value", msg)
}

func (r *Recoder) recode(ctx context.Context, subject string, msg []byte) ([]byte, error) {
	// Most records are of the schema of the subject's last one: comparing
	// that prefix is much cheaper than scanning the schema's JSON.
	r.mu.Lock()
	last := r.last[subject]
	r.mu.Unlock()
	if last != nil && len(msg) > len(last.prefix) && bytes.HasPrefix(msg, last.prefix) && msg[len(msg)-1] == '}' {
		return r.encode(last, msg[len(last.prefix):len(msg)-1])
	}
	schemaJSON, payload, err := Split(msg)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	e := r.entries[subject][string(schemaJSON)] // no copy of the schema per record
	r.mu.Unlock()
	if e == nil {
		if e, err = r.register(ctx, subject, schemaJSON); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	if r.last == nil {
		r.last = map[string]*entry{}
	}
	r.last[subject] = e
	r.mu.Unlock()
	return r.encode(e, payload)
}

func (r *Recoder) encode(e *entry, payload []byte) ([]byte, error) {
	if string(payload) == "null" {
		// A null value (ExtractNewRecordState's delete): Kafka Connect's
		// Avro converters write no bytes for it.
		return nil, nil
	}
	out := make([]byte, 0, len(e.header)+len(payload)/2)
	out = append(out, e.header...)
	return e.schema.AppendPayload(out, payload)
}

// register converts and registers a Connect schema, waiting, without end
// but ctx's, while the registry refuses it or cannot be reached: no record
// of the schema goes out before it is registered, and none is skipped.
func (r *Recoder) register(ctx context.Context, subject string, connectJSON []byte) (*entry, error) {
	s, err := FromConnect(connectJSON)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (%w)", subject, err, debezium.ErrNoSchemaForm)
	}
	retry, logEvery := r.RetryEvery, r.LogEvery
	if retry <= 0 {
		retry = 5 * time.Second
	}
	if logEvery <= 0 {
		logEvery = 30 * time.Second
	}
	var lastLog time.Time
	// refusal is the registry's last answer, which a wait that ends
	// mid-request reports rather than the request's cancellation.
	var refusal error
	for {
		header, err := r.Registry.Register(ctx, subject, s.JSON)
		if err == nil {
			e := &entry{subject: subject, schema: s, header: header,
				prefix: append(append([]byte(`{"schema":`), connectJSON...), `,"payload":`...)}
			r.mu.Lock()
			if r.entries == nil {
				r.entries = map[string]map[string]*entry{}
			}
			if r.entries[subject] == nil {
				r.entries[subject] = map[string]*entry{}
			}
			if len(r.entries[subject]) >= maxSchemasPerSubject {
				// The schemas of expanded outbox payloads come from the
				// rows' data, without end: drop one (a later record of it
				// registers it again, which returns its id), as the
				// converter's schema cache is bounded.
				for k := range r.entries[subject] {
					delete(r.entries[subject], k)
					break
				}
			}
			r.entries[subject][string(connectJSON)] = e
			r.registrations++
			r.mu.Unlock()
			return e, nil
		}
		if ctx.Err() != nil {
			if refusal != nil {
				return nil, fmt.Errorf("registering the schema of %s: %w", subject, refusal)
			}
			return nil, err
		}
		refusal = err
		if r.Log != nil && time.Since(lastLog) >= logEvery {
			lastLog = time.Now()
			var refused *RefusedError
			if errors.As(err, &refused) {
				r.Log.Error("schema registry refused a schema; the pipeline waits and retries: no row is published or skipped until it is registered",
					"registry", r.Registry.Kind(), "subject", subject, "reason", refused.Reason,
					"fix", "make the registry accept it: set the subject's compatibility to one the change keeps (e.g. NONE, or BACKWARD when the change only adds optional columns), or remove the subject's conflicting versions")
			} else if why := deniedReason(err); why != "" {
				r.Log.Error("schema registry denied this pipeline the call; the pipeline waits and retries: no row is published or skipped until it is registered",
					"registry", r.Registry.Kind(), "subject", subject, "reason", why, "fix", deniedFix(r.Registry.Kind()))
			} else {
				r.Log.Error("schema registry unreachable; the pipeline waits and retries", "registry", r.Registry.Kind(), "subject", subject, "error", err.Error(),
					"fix", "check format.schema_registry (url or registry name, credentials, network) and that the registry is up")
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("registering the schema of %s: %w", subject, err)
		case <-time.After(retry):
		}
	}
}

// Split returns the schema and the payload of a JsonConverter message
// {"schema":…,"payload":…}.
func Split(msg []byte) (schema, payload []byte, err error) {
	const head = `{"schema":`
	if len(msg) < len(head) || string(msg[:len(head)]) != head {
		return nil, nil, errors.New(`avro: the message has no schema (format.schemas must be true with Avro)`)
	}
	end, ok := skipValue(msg, len(head))
	const mid = `,"payload":`
	if !ok || len(msg) < end+len(mid)+1 || string(msg[end:end+len(mid)]) != mid || msg[len(msg)-1] != '}' {
		return nil, nil, errors.New("avro: malformed message: expected {\"schema\":…,\"payload\":…}")
	}
	return msg[len(head):end], msg[end+len(mid) : len(msg)-1], nil
}

// skipValue returns the end of the JSON value that starts at i.
func skipValue(b []byte, i int) (int, bool) {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case '{', '[':
			depth++
			i++
		case '}', ']':
			depth--
			i++
		default:
			i++
		}
		if depth == 0 {
			return i, true
		}
	}
	return i, false
}
