package checkpoint

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attrStatus holds the running task's status snapshot (JSON, written by
// pkg/status) in the pipeline's own item: the task role may write only
// that item (dynamodb:LeadingKeys), and every other write is an update,
// so the attribute survives checkpoints and lease renewals.
const attrStatus = "status"

// SaveStatus stores a status snapshot in the pipeline's item, while this
// store holds the lease. It neither renews nor loses the lease: a failed
// condition is only an error here; Save and the heartbeat decide.
func (d *DynamoDB) SaveStatus(ctx context.Context, snapshot []byte) error {
	update := "SET #st = :st"
	attrs := names(ownedCond)
	attrs["#st"] = attrStatus
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.opts.Table),
		Key:                       d.key(),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(ownedCond),
		ExpressionAttributeNames:  attrs,
		ExpressionAttributeValues: map[string]types.AttributeValue{":st": str(string(snapshot)), ":me": str(d.opts.Owner), ":epoch": num(d.epoch)},
	})
	if err != nil {
		return fmt.Errorf("checkpoint: save status of %s in table %s: %w", d.opts.Pipeline, d.opts.Table, err)
	}
	return nil
}

// ReadDynamoDBStatus reads the status snapshot SaveStatus stored, without
// taking the lease; nil when there is none.
func ReadDynamoDBStatus(ctx context.Context, client *dynamodb.Client, table, pipeline string) ([]byte, error) {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(table),
		Key:                      map[string]types.AttributeValue{attrPipeline: str(pipeline)},
		ProjectionExpression:     aws.String("#st"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus},
		ConsistentRead:           aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("checkpoint: read status of %s in table %s: %w", pipeline, table, err)
	}
	if s, ok := out.Item[attrStatus].(*types.AttributeValueMemberS); ok {
		return []byte(s.Value), nil
	}
	return nil, nil
}
