package avro_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/debezium"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
	"github.com/tributary-cdc/tributary/pkg/debezium/avro/avrotest"
	"github.com/tributary-cdc/tributary/pkg/source/postgres"
)

// motoGlue points the AWS SDK at the moto server (make services-up), whose
// Glue Schema Registry serves the calls Glue uses, and creates a registry.
func motoGlue(t *testing.T) string {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:5000")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	ctx := context.Background()
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("avrotest%d", time.Now().UnixNano())
	gc := glue.NewFromConfig(cfg)
	if _, err := gc.CreateRegistry(ctx, &glue.CreateRegistryInput{RegistryName: aws.String(name)}); err != nil {
		t.Fatalf("creating a Glue registry on moto (127.0.0.1:5000): %v", err)
	}
	// moto keeps at most 10 registries.
	t.Cleanup(func() {
		gc.DeleteRegistry(context.Background(), &glue.DeleteRegistryInput{RegistryId: &gluetypes.RegistryId{RegistryName: aws.String(name)}})
	})
	return name
}

// TestGlueRecodeDecodesLikeJSON: records in Glue's wire format, their
// schema version fetched by its UUID and decoded independently, equal the
// JSON; a column added registers a second version of the value schema.
func TestGlueRecodeDecodesLikeJSON(t *testing.T) {
	registry := motoGlue(t)
	ctx := context.Background()
	reg, err := avro.NewGlue(ctx, avro.GlueOptions{RegistryName: registry})
	if err != nil {
		t.Fatal(err)
	}
	rec := &avro.Recoder{Registry: reg, Key: true, Value: true}
	enc := debezium.NewEncoder(debezium.Options{TopicPrefix: registry})
	tbl := wide("g")
	src := change.Source{Block: postgres.SourceBlock, Name: registry, DB: "shop", CommitMicros: 1_700_000_000_000_000}
	wider := wide("g")
	wider.Columns = append(wider.Columns, change.Column{Name: "added", Type: typ(change.KindString, -1, -1), Optional: true})
	wider.Version = 2
	events := []*change.Event{
		{Table: tbl, Op: change.OpCreate, After: wideRow(1, false), Source: src},
		{Table: tbl, Op: change.OpDelete, Before: wideRow(2, true), Source: src},
		{Table: wider, Op: change.OpCreate, After: append(wideRow(3, false), change.TextValue("new")), Source: src},
	}
	versions := map[string]bool{}
	for i, ev := range events {
		key, _, err := enc.AppendKey(nil, ev)
		if err != nil {
			t.Fatal(err)
		}
		value, err := enc.AppendValue(nil, ev, 1_700_000_000_500_000)
		if err != nil {
			t.Fatal(err)
		}
		topic := enc.Topic(ev.Table)
		for what, pair := range map[string][2][]byte{"key": {key}, "value": {value}} {
			var out []byte
			if what == "key" {
				out, err = rec.RecodeKey(ctx, topic, pair[0])
			} else {
				out, err = rec.RecodeValue(ctx, topic, pair[0])
			}
			if err != nil {
				t.Fatalf("event %d %s: %v", i, what, err)
			}
			id, body, err := avro.ParseGlue(out)
			if err != nil {
				t.Fatalf("event %d %s: %v", i, what, err)
			}
			versions[what+id.String()] = true
			schema, err := reg.SchemaByVersion(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			decoded, s, err := avrotest.Decode(schema, body)
			if err != nil {
				t.Fatalf("event %d %s: %v", i, what, err)
			}
			_, payload, _ := avro.Split(pair[0])
			if err := avrotest.Compare(payload, s, decoded); err != nil {
				t.Fatalf("event %d %s: %v", i, what, err)
			}
		}
	}
	// One key schema; two value versions (the column added).
	if len(versions) != 3 {
		t.Errorf("%d distinct key/value schema versions, want 3: %v", len(versions), versions)
	}
}
