package kafka

import (
	"context"
	"crypto/rand"
	"errors"
	"go/build"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestPublishRefusesOversizedMessages: the size limit applies to the
// record as it goes on the wire (value gzipped under message_compression,
// headers included), and a refused message is never handed over: onAck
// does not run, so nothing waits for an acknowledgement that never comes.
// No broker is needed: nothing is sent.
func TestPublishRefusesOversizedMessages(t *testing.T) {
	random := make([]byte, GzipThreshold+1000) // does not compress
	rand.Read(random)
	for _, tc := range []struct {
		name        string
		compression string
		value       []byte
		limit       int
		wantGzipped bool
	}{
		{"plain", "none", make([]byte, 2000), 2000, false},
		{"gzip, incompressible", "gzip", random, len(random), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewProducer(Options{BootstrapServers: "127.0.0.1:1", DisableTLS: true, MaxMessageBytes: tc.limit, MessageCompression: tc.compression})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			m := Message{Topic: "t", Key: []byte(`{"id":1}`), Value: tc.value, Op: "c", EventID: "e1"}
			err = p.Publish(context.Background(), m, func(error) { t.Error("onAck ran for a refused message") })
			var big *MessageTooLargeError
			if !errors.As(err, &big) {
				t.Fatalf("Publish: %v, want a *MessageTooLargeError", err)
			}
			value, gzipped, _ := compressValue(tc.compression, tc.value)
			want := BatchSize(&kgo.Record{Key: m.Key, Value: value, Headers: m.headers(nil, gzipped)})
			if big.Size != want || big.Limit != tc.limit || big.Gzipped != tc.wantGzipped {
				t.Fatalf("refused as %+v, want size %d, limit %d, gzipped %v", big, want, tc.limit, tc.wantGzipped)
			}
			if tc.wantGzipped != strings.HasSuffix(big.Error(), " after gzip") {
				t.Fatalf("reason %q", big.Error())
			}
		})
	}
}

// TestPublishRefusesNegativePartition: a partition_column value below 0
// names no partition; it is refused before anything is sent.
func TestPublishRefusesNegativePartition(t *testing.T) {
	p, err := NewProducer(Options{BootstrapServers: "127.0.0.1:1", DisableTLS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	err = p.Publish(context.Background(), Message{Topic: "t", Value: []byte("{}"), Partition: -1, Partitioned: true}, func(error) { t.Error("onAck ran") })
	var pe *PartitionRangeError
	if !errors.As(err, &pe) || pe.Partition != -1 {
		t.Fatalf("Publish: %v, want a *PartitionRangeError", err)
	}
}

// TestImportsNoConfigDocument: the producer takes its own Options and
// builds no checkpoint types; the configuration document and the
// checkpoint store are its callers' (docs/architecture.md).
func TestImportsNoConfigDocument(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.HasSuffix(imp, "/pkg/config") || strings.HasSuffix(imp, "/pkg/checkpoint") {
			t.Errorf("pkg/kafka imports %s", imp)
		}
	}
}
