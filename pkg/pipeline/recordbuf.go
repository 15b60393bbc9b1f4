package pipeline

import (
	"sync"
	"sync/atomic"

	"github.com/tributary-cdc/tributary/pkg/kafka"
)

// recordBuf is the buffer a row's key and value are encoded into
// (emitRow). It goes back to recordBufs once nothing refers to it: emitRow
// holds it while it encodes and hands records over, and each record handed
// over holds it until its promise ran (the producer keeps a record's bytes
// until then, to send them again on a retry, and a skipped row's promise
// reports its key). A buffer per
// message from the heap would be most of what the pipeline allocates: some
// kilobytes per event, a garbage collection every few thousand events.
type recordBuf struct {
	b    []byte
	refs atomic.Int32
	// headers are the record's own headers (an outbox event's), which
	// the producer reads until the promise ran too; nil: none.
	headers []kafka.Header
}

// maxPooledRecord bounds the buffers kept: a rare large row's buffer is
// left to the garbage collector rather than held for small ones.
const maxPooledRecord = 64 << 10

var recordBufs = sync.Pool{New: func() any { return new(recordBuf) }}

// newRecordBuf returns a buffer held once, by the caller.
func newRecordBuf() *recordBuf {
	rb := recordBufs.Get().(*recordBuf)
	rb.refs.Store(1)
	return rb
}

// hold adds a holder: a record handed over.
func (rb *recordBuf) hold() { rb.refs.Add(1) }

// release drops a holder; the last one returns the buffer.
func (rb *recordBuf) release() {
	if n := rb.refs.Add(-1); n > 0 {
		return
	} else if n < 0 {
		panic("pipeline: record buffer released more often than held")
	}
	if cap(rb.b) > maxPooledRecord {
		rb.b = nil
	}
	rb.b = rb.b[:0]
	recordBufs.Put(rb)
}
