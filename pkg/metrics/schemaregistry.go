package metrics

import "sync"

const (
	registryRequestsName = "tributary_schema_registry_requests_total"
	registryErrorsName   = "tributary_schema_registry_errors_total"
)

// registryKinds are the kinds of schema registry request counted, in the
// order their series are written.
var registryKinds = []string{"register", "lookup", "fetch"}

// registryCalls holds the schema registry counters of one pipeline,
// registered on first use: a pipeline without Avro has none.
type registryCalls struct {
	once     sync.Once
	requests map[string]*Counter
	errors   map[string]*Counter
}

// SchemaRegistryCalls registers the pipeline's schema registry counters
// (every kind at 0, so a scrape sees them before the first call) and
// returns the function a registry client tells of each request: kind is
// register, lookup or fetch; failed when the request did not succeed.
// Schemas are cached, so the counts stay at a few per schema, not one per
// record. Another kind is counted as itself.
func (m *Pipeline) SchemaRegistryCalls() func(kind string, failed bool) {
	if m == nil {
		return func(string, bool) {}
	}
	rc := &m.registry
	rc.once.Do(func() {
		rc.requests, rc.errors = map[string]*Counter{}, map[string]*Counter{}
		for _, k := range registryKinds {
			m.registryCounters(k)
		}
	})
	return func(kind string, failed bool) {
		req, errs := m.registryCounters(kind)
		req.Add(1)
		if failed {
			errs.Add(1)
		}
	}
}

// registryCounters returns the request and error counters of kind.
func (m *Pipeline) registryCounters(kind string) (requests, errors *Counter) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rc := &m.registry
	if c := rc.requests[kind]; c != nil {
		return c, rc.errors[kind]
	}
	l := Labels{"pipeline", m.name, "kind", kind}
	rc.requests[kind] = m.reg.Counter(registryRequestsName,
		"Requests to the schema registry (format avro), by kind: register (a schema registered, or its id found by registering it again), lookup (a schema or subject read without registering), fetch (a schema read by id or version). Schemas are cached: a few per schema, not one per record.", l)
	rc.errors[kind] = m.reg.Counter(registryErrorsName,
		"Requests to the schema registry that failed (unreachable, refused, an HTTP or API error), by kind as tributary_schema_registry_requests_total.", l)
	return rc.requests[kind], rc.errors[kind]
}
