package avro

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
)

// AppendKey appends ev's key to dst: in Avro, framed for the registry,
// when keys are Avro, else the JSON enc writes. A table row's key goes
// straight from its values to Avro (debezium.Encoder.WriteKey), one pass
// with no JSON in between; the messages enc writes only as JSON (see
// debezium.ErrNotFieldWise) are recoded from it. ok is false, and dst
// unchanged, when the table has no key. On error dst is returned
// unchanged.
func (r *Recoder) AppendKey(ctx context.Context, dst []byte, enc *debezium.Encoder, topic string, ev *change.Event) (out []byte, ok bool, err error) {
	if !r.Key {
		return enc.AppendKey(dst, ev)
	}
	w := r.writer(ctx, dst, topic, "-key")
	defer w.release()
	ok, err = enc.WriteKey(ev, w)
	if err == debezium.ErrNotFieldWise {
		var js []byte
		if js, ok, err = enc.AppendKey(w.scratch[:0], ev); err != nil || !ok {
			return dst, ok, err
		}
		avro, err := r.RecodeKey(ctx, topic, js)
		if err != nil {
			return dst, false, err
		}
		return append(dst, avro...), true, nil
	}
	if err == nil && ok {
		err = w.end()
	}
	if err != nil || !ok {
		return dst, false, err
	}
	return w.dst, true, nil
}

// AppendValue is AppendKey for ev's value, written with processing time
// nowMicros. null: the value is null (ExtractNewRecordState's delete)
// and dst is unchanged. head is the Head of a JSON value (values that
// stay JSON), the zero Head for Avro.
func (r *Recoder) AppendValue(ctx context.Context, dst []byte, enc *debezium.Encoder, topic string, ev *change.Event, nowMicros int64) (out []byte, head debezium.Head, null bool, err error) {
	if !r.Value {
		out, head, err = enc.AppendValueHead(dst, ev, nowMicros)
		return out, head, false, err
	}
	w := r.writer(ctx, dst, topic, "-value")
	defer w.release()
	err = enc.WriteValue(ev, nowMicros, w)
	if err == debezium.ErrNotFieldWise {
		js, err := enc.AppendValue(w.scratch[:0], ev, nowMicros)
		if err != nil {
			return dst, head, false, err
		}
		avro, err := r.RecodeValue(ctx, topic, js)
		if err != nil {
			return dst, head, false, err
		}
		if avro == nil {
			return dst, head, true, nil
		}
		return append(dst, avro...), head, false, nil
	}
	if err == nil {
		err = w.end()
	}
	if err != nil {
		return dst, head, false, err
	}
	return w.dst, head, false, nil
}

var writers = sync.Pool{New: func() any { return &fieldWriter{scratch: make([]byte, 0, 4096)} }}

// writer returns a fieldWriter appending to dst a message of subject
// topic+suffix.
func (r *Recoder) writer(ctx context.Context, dst []byte, topic, suffix string) *fieldWriter {
	w := writers.Get().(*fieldWriter)
	w.r, w.ctx, w.topic, w.suffix, w.dst = r, ctx, topic, suffix, dst
	w.root, w.started, w.err = nil, false, nil
	w.stack = w.stack[:0]
	return w
}

// release puts w back in the pool, without the caller's buffer.
func (w *fieldWriter) release() {
	w.r, w.ctx, w.dst, w.root = nil, nil, nil, nil
	writers.Put(w)
}

// entryFor returns the entry of a Connect schema that
// debezium.FieldWriter.Begin gave: the Encoder keeps one slice per table
// version, so its address finds the entry without reading the schema.
func (r *Recoder) entryFor(ctx context.Context, topic, suffix string, schema []byte) (*entry, error) {
	p := unsafe.SliceData(schema)
	r.mu.Lock()
	e := r.byAddr[p]
	r.mu.Unlock()
	if e != nil && len(e.subject) == len(topic)+len(suffix) && e.subject[:len(topic)] == topic && e.subject[len(topic):] == suffix &&
		len(e.prefix) == len(`{"schema":`)+len(schema)+len(`,"payload":`) {
		return e, nil
	}
	subject := topic + suffix
	r.mu.Lock()
	e = r.entries[subject][string(schema)]
	r.mu.Unlock()
	if e == nil {
		var err error
		if e, err = r.register(ctx, subject, schema); err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	if r.byAddr == nil {
		r.byAddr = map[*byte]*entry{}
	}
	r.byAddr[p] = e
	r.mu.Unlock()
	return e, nil
}

// fieldWriter writes the fields a debezium.Encoder gives it as the Avro
// binary of the schema derived from the message's Connect schema.
type fieldWriter struct {
	r       *Recoder
	ctx     context.Context
	topic   string
	suffix  string // of the subject: "-key", "-value"
	dst     []byte
	root    *node
	started bool
	stack   []frame // the records being written
	err     error
	scratch []byte
	dec     decoder // for JSON values
}

// frame is a record being written: i is its next field.
type frame struct {
	n *node
	i int
}

func (w *fieldWriter) Begin(schema []byte) {
	e, err := w.r.entryFor(w.ctx, w.topic, w.suffix, schema)
	if err != nil {
		w.err = err
		return
	}
	w.root = e.schema.root
	w.dst = append(w.dst, e.header...)
}

// next returns the node of the field the call writes, and writes its
// union branch when it is present (not null). After an error the rest
// of the message is written all the same, and dropped.
func (w *fieldWriter) next(present bool) *node {
	if k := len(w.stack); k > 0 {
		top := &w.stack[k-1]
		if top.i < len(top.n.fields) {
			n := top.n.fields[top.i].node
			top.i++
			if present && n.nullable {
				w.dst = append(w.dst, unionPresent(n.nullLast))
			}
			return n
		}
	}
	return w.nextOuter(present)
}

// unionPresent is the union branch of a value that is not null: 1 in
// [null, T], 0 in [T, null] (nullLast), zigzag-encoded.
func unionPresent(nullLast bool) byte {
	if nullLast {
		return 0
	}
	return 2
}

// nextOuter is next for the message's root and past the end of a record.
func (w *fieldWriter) nextOuter(present bool) *node {
	if w.err != nil {
		return nil
	}
	var n *node
	if !w.started {
		w.started, n = true, w.root
	} else {
		for len(w.stack) > 0 {
			top := &w.stack[len(w.stack)-1]
			if top.i < len(top.n.fields) {
				n = top.n.fields[top.i].node
				top.i++
				break
			}
			w.stack = w.stack[:len(w.stack)-1]
		}
	}
	if n == nil {
		w.err = errors.New("avro: the message has more fields than its schema")
		return nil
	}
	if present && n.nullable {
		w.dst = append(w.dst, unionPresent(n.nullLast))
	}
	return n
}

func (w *fieldWriter) mismatch(n *node, what string) {
	if w.err == nil {
		w.err = fmt.Errorf("avro: %s for a field of schema %s", what, describe(n))
	}
}

// end checks that the message had every field of its schema.
func (w *fieldWriter) end() error {
	if w.err != nil {
		return w.err
	}
	for _, f := range w.stack {
		if f.i < len(f.n.fields) {
			return fmt.Errorf("avro: the message lacks field %q of %s", f.n.fields[f.i].json, describe(f.n))
		}
	}
	if !w.started {
		return errors.New("avro: an empty message")
	}
	return nil
}

func (w *fieldWriter) Null() {
	n := w.next(false)
	switch {
	case n == nil:
	case !n.nullable:
		w.mismatch(n, "null")
	case n.nullLast:
		w.dst = append(w.dst, 2)
	default:
		w.dst = append(w.dst, 0)
	}
}

func (w *fieldWriter) Struct() {
	n := w.next(true)
	if n == nil {
		return
	}
	if n.kind != kRecord {
		w.mismatch(n, "a struct")
		return
	}
	w.stack = append(w.stack, frame{n: n})
}

func (w *fieldWriter) Bool(v bool) {
	n := w.next(true)
	if n == nil {
		return
	}
	if n.kind != kBool {
		w.mismatch(n, "a boolean")
		return
	}
	if v {
		w.dst = append(w.dst, 1)
	} else {
		w.dst = append(w.dst, 0)
	}
}

func (w *fieldWriter) Int(v int64) {
	n := w.next(true)
	if n == nil {
		return
	}
	if n.kind != kLong && (n.kind != kInt || v < math.MinInt32 || v > math.MaxInt32) {
		w.mismatch(n, fmt.Sprintf("integer %d", v))
		return
	}
	w.dst = binary.AppendVarint(w.dst, v)
}

func (w *fieldWriter) Float(v float64) {
	n := w.next(true)
	if n == nil {
		return
	}
	if v != v {
		v = javaNaN // as the recoder reads JSON's "NaN": Java's one NaN
	}
	switch n.kind {
	case kFloat:
		w.dst = binary.LittleEndian.AppendUint32(w.dst, math.Float32bits(float32(v)))
	case kDouble:
		w.dst = binary.LittleEndian.AppendUint64(w.dst, math.Float64bits(v))
	default:
		w.mismatch(n, "a floating-point number")
	}
}

func (w *fieldWriter) String(s string) {
	if n := w.next(true); n != nil && w.is(n, kString) {
		w.dst = binary.AppendVarint(w.dst, int64(len(s)))
		w.dst = append(w.dst, s...)
	}
}

func (w *fieldWriter) StringBytes(s []byte) {
	if n := w.next(true); n != nil && w.is(n, kString) {
		w.dst = binary.AppendVarint(w.dst, int64(len(s)))
		w.dst = append(w.dst, s...)
	}
}

func (w *fieldWriter) Bytes(b []byte) {
	if n := w.next(true); n != nil && w.is(n, kBytes) {
		w.dst = binary.AppendVarint(w.dst, int64(len(b)))
		w.dst = append(w.dst, b...)
	}
}

func (w *fieldWriter) is(n *node, k kind) bool {
	if n.kind != k {
		w.mismatch(n, "a "+primitiveName(k))
		return false
	}
	return true
}

// JSON writes a value from its JSON, as the recoder does.
func (w *fieldWriter) JSON(v []byte) {
	n := w.next(false)
	if n == nil {
		return
	}
	w.dec.in, w.dec.pos = v, 0
	out, err := w.dec.value(w.dst, n)
	if err == nil {
		if w.dec.ws(); w.dec.pos != len(v) {
			err = w.dec.errorf("trailing data")
		}
	}
	w.dec.in = nil
	if err != nil {
		w.err = err
		return
	}
	w.dst = out
}

func (w *fieldWriter) Scratch() []byte { return w.scratch[:0] }
