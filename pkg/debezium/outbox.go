package debezium

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium/route"
	"github.com/tributary-cdc/tributary/pkg/jsonstr"
)

// Outbox is Debezium's outbox event router
// (io.debezium.transforms.outbox.EventRouter) applied to every table of
// the pipeline: each inserted row of an outbox table is one event,
// published to a topic named by a column, keyed by another, its value
// the payload column. Deletes are dropped; updates are dropped with
// InvalidOp's say.
type Outbox struct {
	// EventID, EventKey, Payload and RouteBy are the columns of the event
	// id (the "id" header), the key, the value and the topic
	// (table.field.event.id, …key, …payload, route.by.field).
	EventID, EventKey, Payload, RouteBy string
	// Topic renames the route-by column's value into the topic
	// (route.topic.regex, route.topic.replacement).
	Topic *route.Rename
	// Additional are the columns also written as headers or as value
	// fields (table.fields.additional.placement).
	Additional []OutboxField
	// TombstoneOnEmptyPayload publishes an event with a null or blank
	// payload as a record without a value
	// (route.tombstone.on.empty.payload).
	TombstoneOnEmptyPayload bool
	// ExpandJSONPayload writes a string payload holding a JSON object as
	// that object, with a schema inferred from it
	// (table.expand.json.payload).
	ExpandJSONPayload bool
}

// OutboxField is one entry of table.fields.additional.placement.
type OutboxField struct {
	Column   string
	Envelope bool // a field of the value; else a header
	Alias    string
}

// OutboxHeader is a record header an outbox event carries.
type OutboxHeader struct {
	Key   string
	Value []byte
}

// OutboxRecord is the record an outbox event makes; Key, Value and the
// headers' values lie in the buffer AppendOutbox appended to.
type OutboxRecord struct {
	Topic   string
	Key     []byte // nil: none
	Value   []byte // nil: a record without a value
	Headers []OutboxHeader
	// Warning, when not empty, says why the payload was not expanded
	// (ExpandJSONPayload), as Debezium logs it.
	Warning string
	// Expanded: the value holds the payload expanded from its JSON text
	// (ExpandJSONPayload).
	Expanded bool
}

// outboxPlan is an outbox table's columns and precomputed JSON.
type outboxPlan struct {
	err                       error
	id, key, payload, routeBy int // indexes into tableCodec.cols; key -1: none
	keyHead                   []byte
	valueHead                 []byte // header-only placement: the payload's schema
	envelope                  []int  // cols of the envelope fields, in order
	headers                   []int  // cols of the header fields
	envKeys, headerKeys       []string
	// fieldsJSON is the envelope value's schema fields, for its head
	// (built with the first event: EventRouter names the value schema
	// after the first event's route-by value, on any outbox table with
	// the same envelope fields, and keeps that name: envelopeHeads).
	fieldsJSON []byte
	envOnce    sync.Once
	envHead    []byte
	// expandable: the payload column is a string, which ExpandJSONPayload
	// parses.
	expandable bool
	// restJSON is the envelope fields' schemas after the payload's.
	restJSON []byte
}

// maxExpandedHeads bounds the envelope heads kept (envelopeHeads),
// as Debezium bounds its cache of value schemas.
const maxExpandedHeads = 10000

// OutboxOn tells whether the encoder routes outbox events.
func (e *Encoder) OutboxOn() bool { return e.outbox != nil }

func (e *Encoder) outboxPlanOf(c *tableCodec) *outboxPlan {
	c.outboxOnce.Do(func() { c.outbox = e.buildOutbox(c) })
	return c.outbox
}

func (e *Encoder) buildOutbox(c *tableCodec) *outboxPlan {
	o := e.outbox
	p := &outboxPlan{key: -1}
	find := func(name, option string) int {
		for i := range c.cols {
			if c.cols[i].name == name {
				return i
			}
		}
		if p.err == nil {
			p.err = &EncodeError{Table: tableName(c.table), Column: name, Err: ErrTable,
				Detail: "the outbox router's " + option + " names column " + name + ", which the table does not have (transforms.outbox)"}
		}
		return -1
	}
	p.id = find(o.EventID, "table_field_event_id")
	p.payload = find(o.Payload, "table_field_event_payload")
	p.routeBy = find(o.RouteBy, "route_by_field")
	for i := range c.cols {
		if c.cols[i].name == o.EventKey {
			p.key = i
		}
	}
	for _, f := range o.Additional {
		i := find(f.Column, "table_fields_additional_placement")
		if f.Envelope {
			p.envelope, p.envKeys = append(p.envelope, i), append(p.envKeys, f.Alias)
		} else {
			p.headers, p.headerKeys = append(p.headers, i), append(p.headerKeys, f.Alias)
		}
	}
	if p.err != nil {
		return p
	}
	p.expandable = c.fields[p.payload].schema.typ == "string"
	if e.format.NoSchemas {
		return p
	}
	p.keyHead = append(p.keyHead, `{"schema":`...)
	if p.key >= 0 {
		p.keyHead = c.fields[p.key].schema.appendJSON(p.keyHead, "")
	} else {
		p.keyHead = append(p.keyHead, `{"type":"string","optional":false}`...)
	}
	p.keyHead = append(p.keyHead, `,"payload":`...)
	p.valueHead = append(p.valueHead, `{"schema":`...)
	p.valueHead = c.fields[p.payload].schema.appendJSON(p.valueHead, "")
	p.valueHead = append(p.valueHead, `,"payload":`...)
	p.fieldsJSON = c.fields[p.payload].schema.appendJSON(p.fieldsJSON, "payload")
	for j, i := range p.envelope {
		p.restJSON = append(p.restJSON, ',')
		p.restJSON = c.fields[i].schema.appendJSON(p.restJSON, p.envKeys[j])
	}
	p.fieldsJSON = append(p.fieldsJSON, p.restJSON...)
	return p
}

// AppendOutbox appends the record of an outbox event (a row inserted or
// read into an outbox table) to dst. It is called for creates and reads
// only: EventRouter drops deletes and updates.
func (e *Encoder) AppendOutbox(dst []byte, ev *change.Event) ([]byte, OutboxRecord, error) {
	return e.appendOutbox(dst, ev, e.outbox.ExpandJSONPayload)
}

// AppendOutboxString is AppendOutbox with the payload left as the string
// even under ExpandJSONPayload: for a value format in which the inferred
// schema has no form (ErrNoSchemaForm).
func (e *Encoder) AppendOutboxString(dst []byte, ev *change.Event) ([]byte, OutboxRecord, error) {
	return e.appendOutbox(dst, ev, false)
}

// ErrNoSchemaForm is wrapped by the error of a value format (Avro) that
// cannot write a schema the encoder made, e.g. one inferred from an
// expanded outbox payload whose keys it cannot name.
var ErrNoSchemaForm = errors.New("the schema has no form in the value format")

func (e *Encoder) appendOutbox(dst []byte, ev *change.Event, expand bool) ([]byte, OutboxRecord, error) {
	c, err := e.codecFor(ev)
	if err != nil {
		return dst, OutboxRecord{}, err
	}
	p := e.outboxPlanOf(c)
	if p.err != nil {
		return dst, OutboxRecord{}, p.err
	}
	row := ev.After
	if row == nil || len(row) != c.ncols {
		return dst, OutboxRecord{}, &EncodeError{Table: tableName(ev.Table), Err: ErrNoRow}
	}
	plans := c.valuePlans(ev)
	n := len(dst)
	var rec OutboxRecord
	routeText, ok := connectText(&plans[p.routeBy], row)
	if !ok {
		return dst, rec, &EncodeError{Table: tableName(ev.Table), Column: e.outbox.RouteBy, Err: ErrTable,
			Detail: "the outbox event's route_by_field is null or not text: it names the topic"}
	}
	routeValue := string(routeText)
	rec.Topic, _ = e.outbox.Topic.Apply(routeValue)
	if !change.ValidTopic(rec.Topic) {
		return dst, rec, &EncodeError{Table: tableName(ev.Table), Column: e.outbox.RouteBy, Err: ErrTable,
			Detail: "the outbox event's topic " + strconv.Quote(rec.Topic) + " is not one Kafka allows (letters, digits, '.', '_', '-')"}
	}

	// The key: the key column (a string null without one).
	start := len(dst)
	dst = append(dst, p.keyHead...)
	if p.key >= 0 {
		if dst, err = appendPlanValue(dst, &plans[p.key], row); err != nil {
			return dst[:n], rec, &EncodeError{Table: tableName(ev.Table), Column: plans[p.key].name, Err: err}
		}
	} else {
		dst = append(dst, "null"...)
	}
	if len(p.keyHead) > 0 {
		dst = append(dst, '}')
	}
	rec.Key = dst[start:len(dst):len(dst)]

	payload := &row[plans[p.payload].idx]
	empty := payload.Kind == change.Null || (payload.Kind == change.Text && len(trimSpace(payload.Bytes)) == 0)
	var exSchema *inferredSchema
	var exValue []byte
	if expand && payload.Kind != change.Null {
		if text, ok := connectText(&plans[p.payload], row); !p.expandable || !ok {
			rec.Warning = "the outbox payload is not expanded: the payload column is not a string (transforms.outbox.table_expand_json_payload)"
		} else if exSchema, exValue, err = expandPayload(e.outbox.Payload, string(text)); err != nil {
			exSchema, exValue = nil, nil
			rec.Warning = "the outbox payload is not expanded and is published as the string: " + err.Error() + " (transforms.outbox.table_expand_json_payload)"
		}
	}
	rec.Expanded = exSchema != nil
	if !(empty && e.outbox.TombstoneOnEmptyPayload) {
		start = len(dst)
		switch {
		case len(p.envelope) == 0 && exSchema != nil:
			if !e.format.NoSchemas {
				dst = exSchema.appendJSON(append(dst, `{"schema":`...), nil)
				dst = append(dst, `,"payload":`...)
			}
			dst = append(dst, exValue...)
			if !e.format.NoSchemas {
				dst = append(dst, '}')
			}
		case len(p.envelope) == 0:
			dst = append(dst, p.valueHead...)
			if dst, err = appendPlanValue(dst, &plans[p.payload], row); err != nil {
				return dst[:n], rec, &EncodeError{Table: tableName(ev.Table), Column: plans[p.payload].name, Err: err}
			}
			if len(p.valueHead) > 0 {
				dst = append(dst, '}')
			}
		default:
			if !e.format.NoSchemas && exSchema != nil {
				dst = append(dst, p.expandedHead(e, c, exSchema, routeValue)...)
			} else if !e.format.NoSchemas {
				p.envOnce.Do(func() {
					p.envHead = e.envelopeHead(p.fieldsJSON[:len(p.fieldsJSON)-len(p.restJSON)], p.restJSON, c.schema+"."+routeValue+".Value")
				})
				dst = append(dst, p.envHead...)
			}
			dst = append(dst, `{"payload":`...)
			if exSchema != nil {
				dst = append(dst, exValue...)
			} else if dst, err = appendPlanValue(dst, &plans[p.payload], row); err != nil {
				return dst[:n], rec, &EncodeError{Table: tableName(ev.Table), Column: plans[p.payload].name, Err: err}
			}
			for j, i := range p.envelope {
				dst = append(jsonstr.Append(append(dst, ','), p.envKeys[j]), ':')
				if dst, err = appendPlanValue(dst, &plans[i], row); err != nil {
					return dst[:n], rec, &EncodeError{Table: tableName(ev.Table), Column: plans[i].name, Err: err}
				}
			}
			dst = append(dst, '}')
			if !e.format.NoSchemas {
				dst = append(dst, '}')
			}
		}
		rec.Value = dst[start:len(dst):len(dst)]
	}

	// Headers: the event id, then the header fields, as Kafka Connect's
	// SimpleHeaderConverter writes them (a string's text, a number's
	// digits); a null is a header without a value.
	rec.Headers = make([]OutboxHeader, 0, 1+len(p.headers))
	rec.Headers = append(rec.Headers, outboxHeader("id", &plans[p.id], row))
	for j, i := range p.headers {
		rec.Headers = append(rec.Headers, outboxHeader(p.headerKeys[j], &plans[i], row))
	}
	return dst, rec, nil
}

// expandedHead is the head of an envelope value whose payload has the
// inferred schema s.
func (p *outboxPlan) expandedHead(e *Encoder, c *tableCodec, s *inferredSchema, routeValue string) []byte {
	return e.envelopeHead(s.appendJSON(nil, &envelopePayload), p.restJSON, c.schema+"."+routeValue+".Value")
}

// envelopeHeads are the heads of envelope values by their payload's and
// other fields' schemas, shared by the encoder's outbox tables:
// EventRouter caches the value schema per payload schema in one cache for
// every table, so a payload schema seen first on one table keeps, on
// another, the name the first table's event gave it.
type envelopeHeads struct {
	mu sync.Mutex
	m  map[string][]byte
}

// envelopeHead is the head of an envelope value of the fields payloadField
// and restJSON, named name unless an earlier event's value of those fields
// named it.
func (e *Encoder) envelopeHead(payloadField, restJSON []byte, name string) []byte {
	key := string(payloadField) + string(restJSON)
	e.heads.mu.Lock()
	defer e.heads.mu.Unlock()
	if h, ok := e.heads.m[key]; ok {
		return h
	}
	if e.heads.m == nil || len(e.heads.m) >= maxExpandedHeads {
		e.heads.m = map[string][]byte{}
	}
	h := append([]byte(`{"schema":{"type":"struct","fields":[`), payloadField...)
	h = append(h, restJSON...)
	h = append(h, `],"optional":false,"name":`...)
	h = jsonstr.Append(h, name)
	h = append(h, `},"payload":`...)
	e.heads.m[key] = h
	return h
}

func outboxHeader(key string, p *colPlan, row change.Row) OutboxHeader {
	v, _ := connectText(p, row)
	return OutboxHeader{Key: key, Value: v}
}

// connectText is a column's value as Kafka Connect's
// SimpleHeaderConverter writes it: a string's characters, a number's or
// a boolean's JSON text; ok false for a null.
func connectText(p *colPlan, row change.Row) (text []byte, ok bool) {
	b, err := appendPlanValue(nil, p, row)
	if err != nil || string(b) == "null" {
		return nil, false
	}
	if b[0] == '"' {
		var s string
		if json.Unmarshal(b, &s) != nil {
			return nil, false
		}
		return []byte(s), true
	}
	return b, true
}

// appendPlanValue appends the value of one column as a row's field is
// written (a null with a default is the default).
func appendPlanValue(b []byte, p *colPlan, row change.Row) ([]byte, error) {
	start := len(b)
	b, err := p.appendValue(b, &row[p.idx])
	if err != nil {
		return b, err
	}
	if p.dflt != nil && string(b[start:]) == "null" {
		b = append(b[:start], p.dflt...)
	}
	return b, nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && b[0] <= ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] <= ' ' {
		b = b[:len(b)-1]
	}
	return b
}

// Expanding a JSON payload (table.expand.json.payload): EventRouter parses
// a string payload that starts with '{' or '[' with Jackson and infers a
// Connect schema from it (JsonSchemaData): a string, a boolean, an int32,
// an int64 or a float64 by the number's form and size, an array typed by
// its first non-null element, a struct per object, named after its path
// from the payload column ("payload", "payload.items"); a null field or
// an empty array has no schema and is left out of its struct. When the
// inference fails (invalid JSON, an array of mixed types or of nulls
// only) the payload stays the string; so it does here, with a warning as
// Debezium logs one. Where Debezium's transform itself fails and stops
// the connector (a top-level array, an integer beyond int64, an array
// element that does not fit the schema inferred from the others) the
// payload also stays the string here, with a warning.

type jsonKind byte

const (
	jsonNull jsonKind = iota
	jsonString
	jsonBool
	jsonInt32
	jsonInt64
	jsonDouble
	jsonBigInt
	jsonArray
	jsonObject
)

// jsonNode is a parsed JSON value as Jackson's tree holds it: an object's
// keys in first-seen order, a repeated key's later value replacing the
// earlier in place.
type jsonNode struct {
	kind  jsonKind
	text  string // a string's characters
	b     bool
	i     int64
	f     float64
	keys  []string
	vals  []*jsonNode // an object's values (keys) or an array's elements
	index map[string]int
}

func (n *jsonNode) get(key string) (*jsonNode, bool) {
	i, ok := n.index[key]
	if !ok {
		return nil, false
	}
	return n.vals[i], true
}

// maxJSONDepth is the deepest nesting Jackson reads by default
// (StreamReadConstraints): EventRouter keeps a deeper payload as the
// string.
const maxJSONDepth = 1000

var errJSONTooDeep = fmt.Errorf("the payload is nested deeper than %d levels", maxJSONDepth)

func parseJSONPayload(s string) (*jsonNode, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	return parseJSONValue(d, 0)
}

func parseJSONValue(d *json.Decoder, depth int) (*jsonNode, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case nil:
		return &jsonNode{kind: jsonNull}, nil
	case bool:
		return &jsonNode{kind: jsonBool, b: t}, nil
	case string:
		return &jsonNode{kind: jsonString, text: t}, nil
	case json.Number:
		return jsonNumber(string(t))
	case json.Delim:
		// depth counts the objects and arrays around this one.
		if depth >= maxJSONDepth {
			return nil, errJSONTooDeep
		}
		if t == '[' {
			n := &jsonNode{kind: jsonArray}
			for d.More() {
				v, err := parseJSONValue(d, depth+1)
				if err != nil {
					return nil, err
				}
				n.vals = append(n.vals, v)
			}
			_, err := d.Token()
			return n, err
		}
		n := &jsonNode{kind: jsonObject, index: map[string]int{}}
		for d.More() {
			kt, err := d.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := parseJSONValue(d, depth+1)
			if err != nil {
				return nil, err
			}
			if i, ok := n.index[k]; ok {
				n.vals[i] = v
				continue
			}
			n.index[k] = len(n.keys)
			n.keys, n.vals = append(n.keys, k), append(n.vals, v)
		}
		_, err := d.Token()
		return n, err
	}
	return nil, fmt.Errorf("unexpected %v", tok)
}

// jsonNumber types a number as Jackson does: an integer as an int if it
// fits 32 bits, else a long if it fits 64, else a BigInteger; anything
// with a fraction or an exponent a double.
func jsonNumber(s string) (*jsonNode, error) {
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return &jsonNode{kind: jsonDouble, f: f}, nil
	}
	i, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return &jsonNode{kind: jsonBigInt}, nil
	case i >= math.MinInt32 && i <= math.MaxInt32:
		return &jsonNode{kind: jsonInt32, i: i}, nil
	}
	return &jsonNode{kind: jsonInt64, i: i}, nil
}

// inferredSchema is an inferred Connect schema: optional but for the
// struct merged from an array's objects of different schemas (Connect's
// SchemaUtil.copySchemaBasics, which EventRouter merges with, does not
// copy optionality).
type inferredSchema struct {
	required bool
	typ      string // as JsonConverter names it: string, boolean, int32, int64, double, array, struct
	name     string
	named    bool
	fields   []string
	schemas  []*inferredSchema // a struct's field schemas
	items    *inferredSchema
}

func (s *inferredSchema) field(name string) *inferredSchema {
	for i, f := range s.fields {
		if f == name {
			return s.schemas[i]
		}
	}
	return nil
}

func (s *inferredSchema) equal(o *inferredSchema) bool {
	if s == nil || o == nil {
		return s == o
	}
	if s.required != o.required || s.typ != o.typ || s.name != o.name || s.named != o.named || len(s.fields) != len(o.fields) || !s.items.equal(o.items) {
		return false
	}
	for i := range s.fields {
		if s.fields[i] != o.fields[i] || !s.schemas[i].equal(o.schemas[i]) {
			return false
		}
	}
	return true
}

var scalarSchemas = map[jsonKind]*inferredSchema{
	jsonString: {typ: "string"}, jsonBool: {typ: "boolean"}, jsonInt32: {typ: "int32"},
	jsonInt64: {typ: "int64"}, jsonDouble: {typ: "double"}, jsonBigInt: {typ: "double"},
}

// inferSchema is JsonSchemaData.toConnectSchema: nil for a null or an
// empty array (left out of its struct).
func inferSchema(key string, named bool, n *jsonNode) (*inferredSchema, error) {
	switch n.kind {
	case jsonNull:
		return nil, nil
	case jsonArray:
		if len(n.vals) == 0 {
			return nil, nil
		}
		items, err := inferItems(key, named, n)
		if err != nil {
			return nil, err
		}
		return &inferredSchema{typ: "array", items: items}, nil
	case jsonObject:
		s := &inferredSchema{typ: "struct", name: key, named: named}
		for i, k := range n.keys {
			fk := k
			if named && strings.TrimSpace(key) != "" {
				fk = key + "." + k
			}
			fs, err := inferSchema(fk, true, n.vals[i])
			if err != nil {
				return nil, err
			}
			if fs != nil && k == "" {
				// Connect's SchemaBuilder refuses a field without a name.
				return nil, errors.New("an object with an empty key")
			}
			if fs != nil {
				s.fields, s.schemas = append(s.fields, k), append(s.schemas, fs)
			}
		}
		return s, nil
	}
	return scalarSchemas[n.kind], nil
}

// inferItems is an array's element schema: its non-null elements must be
// of one kind (numbers of one Connect type); objects' schemas are merged,
// a field's first schema kept.
func inferItems(key string, named bool, n *jsonNode) (*inferredSchema, error) {
	var sample *jsonNode
	for _, v := range n.vals {
		if v.kind == jsonNull {
			continue
		}
		if sample == nil {
			sample = v
		}
		if nodeType(v) != nodeType(sample) || (nodeType(v) == jsonInt32 && scalarSchemas[v.kind].typ != scalarSchemas[sample.kind].typ) {
			return nil, errors.New("an array of mixed types")
		}
	}
	if sample == nil {
		return nil, errors.New("an array of nulls only")
	}
	if sample.kind != jsonObject {
		s, err := inferSchema("", false, sample)
		if err == nil && s == nil {
			err = errors.New("an array of empty arrays")
		}
		return s, err
	}
	var merged *inferredSchema
	for _, v := range n.vals {
		if v.kind != jsonObject {
			continue
		}
		s, err := inferSchema(key, named, v)
		if err != nil {
			return nil, err
		}
		if merged == nil {
			merged = s
			continue
		}
		if merged.equal(s) {
			continue
		}
		merged = mergeStructs(merged, s)
		merged.required = true
	}
	return merged, nil
}

// mergeStructs is a struct with a's fields, then those only b has. A field
// both have keeps a's schema, but where both are structs (or arrays of
// structs) their fields are merged too: Debezium merges its elements' schemas
// in the order of a HashSet, which differs between JVMs, and in one of its
// orders keeps every member; keeping a's alone would drop the members of a
// later element's inner objects. a and b are not changed.
func mergeStructs(a, b *inferredSchema) *inferredSchema {
	m := &inferredSchema{required: a.required, typ: "struct", name: a.name, named: a.named,
		fields: slices.Clone(a.fields), schemas: slices.Clone(a.schemas)}
	for i, f := range b.fields {
		j := slices.Index(m.fields, f)
		switch {
		case j < 0:
			m.fields, m.schemas = append(m.fields, f), append(m.schemas, b.schemas[i])
		case m.schemas[j].typ == "struct" && b.schemas[i].typ == "struct" && !m.schemas[j].equal(b.schemas[i]):
			m.schemas[j] = mergeStructs(m.schemas[j], b.schemas[i])
		case m.schemas[j].typ == "array" && b.schemas[i].typ == "array" &&
			m.schemas[j].items.typ == "struct" && b.schemas[i].items.typ == "struct" && !m.schemas[j].equal(b.schemas[i]):
			arr := *m.schemas[j]
			arr.items = mergeStructs(arr.items, b.schemas[i].items)
			m.schemas[j] = &arr
		}
	}
	return m
}

// nodeType is Jackson's node type: every number is one.
func nodeType(n *jsonNode) jsonKind {
	switch n.kind {
	case jsonInt64, jsonDouble, jsonBigInt:
		return jsonInt32
	}
	return n.kind
}

// envelopePayload is the envelope value's field of the payload.
var envelopePayload = "payload"

// appendJSON appends s as JsonConverter writes a schema; field, when not
// nil, is its name as a struct's field (a JSON key may be empty).
func (s *inferredSchema) appendJSON(b []byte, field *string) []byte {
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, s.typ)
	switch s.typ {
	case "struct":
		b = append(b, `,"fields":[`...)
		for i, f := range s.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = s.schemas[i].appendJSON(b, &f)
		}
		b = append(b, ']')
	case "array":
		b = append(b, `,"items":`...)
		b = s.items.appendJSON(b, nil)
	}
	b = append(b, `,"optional":`...)
	b = strconv.AppendBool(b, !s.required)
	if s.named {
		b = jsonstr.Append(append(b, `,"name":`...), s.name)
	}
	if field != nil {
		b = jsonstr.Append(append(b, `,"field":`...), *field)
	}
	return append(b, '}')
}

var errJSONMismatch = errors.New("a value that does not fit the schema inferred for it")

// appendJSONValue writes n as JsonConverter writes the Connect value
// JsonSchemaData makes of it under schema s.
func appendJSONValue(b []byte, s *inferredSchema, n *jsonNode) ([]byte, error) {
	if n == nil || n.kind == jsonNull {
		if s != nil && s.required {
			return b, errJSONMismatch
		}
		return append(b, "null"...), nil
	}
	if s == nil {
		return b, errJSONMismatch
	}
	switch {
	case n.kind == jsonString && s.typ == "string":
		return jsonstr.Append(b, n.text), nil
	case n.kind == jsonBool && s.typ == "boolean":
		return strconv.AppendBool(b, n.b), nil
	case n.kind == jsonInt32 && s.typ == "int32", n.kind == jsonInt64 && s.typ == "int64":
		return strconv.AppendInt(b, n.i, 10), nil
	case n.kind == jsonDouble && s.typ == "double":
		return appendJavaFloat(b, n.f, 64), nil
	case n.kind == jsonArray && s.typ == "array":
		b = append(b, '[')
		for i, v := range n.vals {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendJSONValue(b, s.items, v); err != nil {
				return b, err
			}
		}
		return append(b, ']'), nil
	case n.kind == jsonObject && s.typ == "struct":
		// A member the schema has no field for would be left out: the
		// payload goes out as the string instead. A null or an empty
		// array has no schema of its own and is left out as Debezium
		// leaves it out.
		for i, k := range n.keys {
			if v := n.vals[i]; s.field(k) == nil && v.kind != jsonNull && (v.kind != jsonArray || len(v.vals) > 0) {
				return b, errJSONMismatch
			}
		}
		b = append(b, '{')
		for i, f := range s.fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(jsonstr.Append(b, f), ':')
			v, _ := n.get(f)
			var err error
			if b, err = appendJSONValue(b, s.schemas[i], v); err != nil {
				return b, err
			}
		}
		return append(b, '}'), nil
	}
	return b, errJSONMismatch
}

// expandPayload is the payload text as EventRouter expands it: its schema
// (as the field "payload" when field is true) and its value, or why not.
func expandPayload(column, text string) (schema *inferredSchema, value []byte, err error) {
	if !strings.HasPrefix(text, "{") && !strings.HasPrefix(text, "[") {
		return nil, nil, errors.New("the payload is not a JSON object")
	}
	n, err := parseJSONPayload(text)
	if err != nil {
		// The parser's message would quote the payload, which may hold
		// anything: only where it failed.
		var se *json.SyntaxError
		if errors.Is(err, errJSONTooDeep) {
			return nil, nil, err
		}
		if errors.As(err, &se) {
			return nil, nil, fmt.Errorf("the payload is not valid JSON (at byte %d)", se.Offset)
		}
		return nil, nil, errors.New("the payload is not valid JSON")
	}
	if n.kind != jsonObject {
		return nil, nil, errors.New("the payload is not a JSON object")
	}
	if schema, err = inferSchema(column, true, n); err != nil {
		return nil, nil, err
	}
	if value, err = appendJSONValue(nil, schema, n); err != nil {
		return nil, nil, err
	}
	return schema, value, nil
}
