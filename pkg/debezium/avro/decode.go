package avro

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

var errShort = errors.New("avro: record ends early")

// KeyPayload returns the fields of an Avro key this Recoder wrote, as the
// JSON key's payload has them (numbers as json.Number, bytes in base64),
// for the row.skipped event's primary_key; nil when rec is not such a key.
func (r *Recoder) KeyPayload(rec []byte) map[string]any {
	r.mu.Lock()
	var e *entry
	for subject, bySchema := range r.entries {
		if !strings.HasSuffix(subject, "-key") {
			continue
		}
		for _, c := range bySchema {
			if len(rec) >= len(c.header) && bytes.Equal(rec[:len(c.header)], c.header) && c.schema.root.kind == kRecord {
				e = c
			}
		}
	}
	r.mu.Unlock()
	if e == nil {
		return nil
	}
	d := reader{in: rec[len(e.header):]}
	v, err := d.value(e.schema.root)
	if err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// reader decodes the Avro binary of a plan.
type reader struct {
	in  []byte
	pos int
}

func (d *reader) long() (int64, error) {
	v, n := binary.Varint(d.in[d.pos:])
	if n <= 0 {
		return 0, errShort
	}
	d.pos += n
	return v, nil
}

func (d *reader) take(n int64) ([]byte, error) {
	if n < 0 || int64(len(d.in)-d.pos) < n {
		return nil, errShort
	}
	b := d.in[d.pos : d.pos+int(n)]
	d.pos += int(n)
	return b, nil
}

func (d *reader) value(n *node) (any, error) {
	if n.nullable {
		i, err := d.long()
		if err != nil {
			return nil, err
		}
		if (i == 0) != n.nullLast {
			return nil, nil // the null branch
		}
	}
	switch n.kind {
	case kBool:
		b, err := d.take(1)
		if err != nil {
			return nil, err
		}
		return b[0] == 1, nil
	case kInt, kLong:
		v, err := d.long()
		return json.Number(strconv.FormatInt(v, 10)), err
	case kFloat, kDouble:
		var f float64
		if n.kind == kFloat {
			b, err := d.take(4)
			if err != nil {
				return nil, err
			}
			f = float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		} else {
			b, err := d.take(8)
			if err != nil {
				return nil, err
			}
			f = math.Float64frombits(binary.LittleEndian.Uint64(b))
		}
		switch {
		case math.IsNaN(f):
			return "NaN", nil
		case math.IsInf(f, 1):
			return "Infinity", nil
		case math.IsInf(f, -1):
			return "-Infinity", nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case kString, kBytes:
		l, err := d.long()
		if err != nil {
			return nil, err
		}
		b, err := d.take(l)
		if err != nil {
			return nil, err
		}
		if n.kind == kBytes {
			return base64.StdEncoding.EncodeToString(b), nil
		}
		return string(b), nil
	case kArray, kMap:
		var arr []any
		m := map[string]any{}
		for {
			count, err := d.long()
			if err != nil {
				return nil, err
			}
			if count == 0 {
				break
			}
			if count < 0 { // a block with its size in bytes
				count = -count
				if _, err := d.long(); err != nil {
					return nil, err
				}
			}
			for ; count > 0; count-- {
				var k any
				if n.kind == kMap {
					if k, err = d.value(&node{kind: kString}); err != nil {
						return nil, err
					}
				}
				v, err := d.value(n.items)
				if err != nil {
					return nil, err
				}
				if n.kind == kMap {
					m[k.(string)] = v
				} else {
					arr = append(arr, v)
				}
			}
		}
		if n.kind == kMap {
			return m, nil
		}
		if arr == nil {
			arr = []any{}
		}
		return arr, nil
	case kRecord:
		m := make(map[string]any, len(n.fields))
		for _, f := range n.fields {
			v, err := d.value(f.node)
			if err != nil {
				return nil, err
			}
			m[f.json] = v
		}
		return m, nil
	}
	return nil, errors.New("avro: unknown schema kind")
}
