package debezium

import (
	"encoding/json"
	"strconv"
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
	// after the first event's route-by value and keeps that name).
	fieldsJSON []byte
	envOnce    sync.Once
	envHead    []byte
}

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
	if p.err != nil || e.format.NoSchemas {
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
		p.fieldsJSON = append(p.fieldsJSON, ',')
		p.fieldsJSON = c.fields[i].schema.appendJSON(p.fieldsJSON, p.envKeys[j])
	}
	return p
}

// AppendOutbox appends the record of an outbox event (a row inserted or
// read into an outbox table) to dst. It is called for creates and reads
// only: EventRouter drops deletes and updates.
func (e *Encoder) AppendOutbox(dst []byte, ev *change.Event) ([]byte, OutboxRecord, error) {
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
	if !validTopic(rec.Topic) {
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
	if !(empty && e.outbox.TombstoneOnEmptyPayload) {
		start = len(dst)
		switch {
		case len(p.envelope) == 0:
			dst = append(dst, p.valueHead...)
			if dst, err = appendPlanValue(dst, &plans[p.payload], row); err != nil {
				return dst[:n], rec, &EncodeError{Table: tableName(ev.Table), Column: plans[p.payload].name, Err: err}
			}
			if len(p.valueHead) > 0 {
				dst = append(dst, '}')
			}
		default:
			if !e.format.NoSchemas {
				p.envOnce.Do(func() {
					h := append([]byte(`{"schema":{"type":"struct","fields":[`), p.fieldsJSON...)
					h = append(h, `],"optional":false,"name":`...)
					h = jsonstr.Append(h, c.schema+"."+routeValue+".Value")
					p.envHead = append(h, `},"payload":`...)
				})
				dst = append(dst, p.envHead...)
			}
			dst = append(dst, `{"payload":`...)
			if dst, err = appendPlanValue(dst, &plans[p.payload], row); err != nil {
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
