package debezium

import "github.com/tributary-cdc/tributary/pkg/change"

// Document tables (change.Table.Document): their driver writes the key and
// the value, in its connector's document-shaped envelope; the encoder
// keeps the rest (the topic and its claim, the format's options, the
// delete records). With format.unwrap the driver writes what its
// connector's document transform makes of the record.

func (e *Encoder) documentFormat() change.DocumentFormat {
	f := change.DocumentFormat{Prefix: e.prefix, Version: e.version, Schemas: !e.format.NoSchemas}
	if e.format.Unwrap {
		f.Unwrap, f.DeleteHandling, f.AddFields = true, e.format.DeleteHandling, e.format.AddFields
	}
	return f
}

func (e *Encoder) appendDocumentKey(dst []byte, ev *change.Event) ([]byte, bool, error) {
	n := len(dst)
	out, err := ev.Table.Document.AppendDocumentKey(dst, ev, e.documentFormat())
	if err != nil {
		return dst[:n], false, &EncodeError{Table: tableName(ev.Table), Err: ErrTable, Detail: err.Error()}
	}
	return out, true, nil
}

func (e *Encoder) appendDocumentValue(dst []byte, ev *change.Event, nowMicros int64) ([]byte, Head, error) {
	n := len(dst)
	out, err := ev.Table.Document.AppendDocumentValue(dst, ev, e.documentFormat(), nowMicros)
	if err != nil {
		return dst[:n], Head{}, &EncodeError{Table: tableName(ev.Table), Err: ErrTable, Detail: err.Error()}
	}
	return out, Head{}, nil
}
