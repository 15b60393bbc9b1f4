package itest

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/tributary-cdc/tributary/integration/awstest"
)

// TestLease is the lease of the binaries these tests start: a takeover
// after a crash waits a little longer than that.
const TestLease = "3s"

// UseMoto points this process (and so every binary it starts) at the AWS
// emulator, with short leases.
func UseMoto(t *testing.T) {
	t.Helper()
	awstest.Env(t)
	t.Setenv("TRIBUTARY_LEASE_DURATION", TestLease)
}

// WriteDynamoConfig writes a pipeline config that checkpoints in the
// DynamoDB table (created when missing). extra goes into the source section.
func (e *Env) WriteDynamoConfig(table, extra string) string {
	return e.WritePipeline(PipelineConfig{Source: extra, Checkpoint: DynamoCheckpoint(table)})
}

// DynamoCheckpoint is the checkpoint section of a DynamoDB store in table,
// created when missing.
func DynamoCheckpoint(table string) string {
	return "  store: dynamodb\n  table: " + table + "\n  create_table: true\n"
}

// TestTableName is a DynamoDB table name of this test process's own.
func TestTableName(label string) string {
	return "tributary-it-" + UniqueName(label)
}

// DynamoItem reads a pipeline's item from the emulator (nil: none).
func DynamoItem(t *testing.T, table, pipeline string) map[string]types.AttributeValue {
	t.Helper()
	it, err := getDynamoItem(table, pipeline)
	if err != nil {
		t.Fatal(err)
	}
	return it
}

// DynamoItemQuiet is DynamoItem for background goroutines: nil on errors.
func DynamoItemQuiet(table, pipeline string) map[string]types.AttributeValue {
	it, _ := getDynamoItem(table, pipeline)
	return it
}

func getDynamoItem(table, pipeline string) (map[string]types.AttributeValue, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	out, err := dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pipeline": &types.AttributeValueMemberS{Value: pipeline}},
	})
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return out.Item, nil
}

// AttrS is the string attribute name of a DynamoDB item ("" if absent).
func AttrS(it map[string]types.AttributeValue, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

// AttrN is the number attribute name of a DynamoDB item, as text ("" if
// absent).
func AttrN(it map[string]types.AttributeValue, name string) string {
	if s, ok := it[name].(*types.AttributeValueMemberN); ok {
		return s.Value
	}
	return ""
}

// WithDynamoStore makes the config at path checkpoint in the DynamoDB
// table (WritePipeline writes the checkpoint section last).
func WithDynamoStore(t *testing.T, path, table string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := strings.LastIndex(string(b), "checkpoint:\n")
	if i < 0 {
		t.Fatalf("no checkpoint section in %s", path)
	}
	if err := os.WriteFile(path, []byte(string(b[:i])+"checkpoint:\n"+DynamoCheckpoint(table)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
