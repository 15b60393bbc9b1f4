package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// attrBackfill holds the pending backfill request in the pipeline's item:
// a string set of table names, allTables for every table. A set, so that
// writers add (ADD) and the owner removes what it handed over (DELETE)
// atomically, with no read-modify-write: a request written between the
// owner's read and its clear survives.
const attrBackfill = "backfill"

// attrBackfillCount counts the requests ever written (ADD 1 with each:
// Request.Stamp, and the latest one's LastAfter is one less), and
// attrBackfillLast is the latest one's own set (Request.Last). Attributes
// of their own: a binary from before them reads the set alone, as it did.
const (
	attrBackfillCount = "backfill_count"
	attrBackfillLast  = "backfill_last"
)

// allTables stands for Request.All in the set (no table is named "*").
const allTables = "*"

// requestSet is r as a string set. Each value once: DynamoDB refuses a set
// holding one twice, and callers need not have merged r.
func requestSet(r Request) *types.AttributeValueMemberSS {
	set := Request{}.Merge(r).Tables
	if r.All && !slices.Contains(set, allTables) {
		set = append(set, allTables)
	}
	return &types.AttributeValueMemberSS{Value: set}
}

func requestOf(av types.AttributeValue) Request {
	ss, ok := av.(*types.AttributeValueMemberSS)
	if !ok {
		return Request{}
	}
	var r Request
	for _, t := range ss.Value {
		if t == allTables {
			r.All = true
		} else {
			r.Tables = append(r.Tables, t)
		}
	}
	return Request{}.Merge(r)
}

// RequestBackfillDynamoDB adds r to the pending request in the pipeline's
// item of table. It is one UpdateItem that touches nothing but the
// request attribute, conditional on the item existing (ErrNeverRan
// otherwise), so it needs only dynamodb:UpdateItem and never disturbs the
// lease.
func RequestBackfillDynamoDB(ctx context.Context, client *dynamodb.Client, table, pipeline string, r Request) error {
	if r.Empty() {
		return fmt.Errorf("checkpoint: a backfill request needs tables or all")
	}
	_, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(table),
		Key:                       map[string]types.AttributeValue{attrPipeline: str(pipeline)},
		UpdateExpression:          aws.String("ADD #bf :req, #bn :one SET #bl = :req"),
		ConditionExpression:       aws.String("attribute_exists(#k)"),
		ExpressionAttributeNames:  map[string]string{"#bf": attrBackfill, "#bn": attrBackfillCount, "#bl": attrBackfillLast, "#k": attrPipeline},
		ExpressionAttributeValues: map[string]types.AttributeValue{":req": requestSet(r), ":one": num(1)},
	})
	var missing *types.ResourceNotFoundException
	switch {
	case isConditionFailed(err):
		return fmt.Errorf("%w: no item for %s in table %s", ErrNeverRan, pipeline, table)
	case errors.As(err, &missing):
		return fmt.Errorf("%w: table %s does not exist", ErrNeverRan, table)
	}
	if err != nil {
		return fmt.Errorf("checkpoint: request a backfill of %s in table %s: %w", pipeline, table, err)
	}
	return nil
}

// PendingDynamoDB reads the pending request in the pipeline's item, for
// status displays and the owner.
func PendingDynamoDB(ctx context.Context, client *dynamodb.Client, table, pipeline string) (Request, error) {
	out, err := client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(table),
		Key:                      map[string]types.AttributeValue{attrPipeline: str(pipeline)},
		ProjectionExpression:     aws.String("#bf, #bn, #bl"),
		ExpressionAttributeNames: map[string]string{"#bf": attrBackfill, "#bn": attrBackfillCount, "#bl": attrBackfillLast},
		ConsistentRead:           aws.Bool(true),
	})
	if err != nil {
		return Request{}, fmt.Errorf("checkpoint: read the backfill request of %s in table %s: %w", pipeline, table, err)
	}
	r := requestOf(out.Item[attrBackfill])
	if n, ok := out.Item[attrBackfillCount].(*types.AttributeValueMemberN); ok {
		r.Stamp, _ = strconv.ParseUint(n.Value, 10, 64)
	}
	if last, ok := out.Item[attrBackfillLast]; ok && r.Stamp > 0 {
		l := requestOf(last)
		r.Last, r.LastAfter = &l, r.Stamp-1
	}
	return r, nil
}

// PendingBackfill implements Requests.
func (d *DynamoDB) PendingBackfill(ctx context.Context) (Request, error) {
	return PendingDynamoDB(ctx, d.client, d.opts.Table, d.opts.Pipeline)
}

// ClearBackfill implements Requests: a DELETE from the set, conditional
// on this store still holding the lease (a stale owner must not drop a
// request its successor has to serve) and on the count of requests
// standing where handed read it. Like SaveStatus it neither renews nor
// loses the lease.
func (d *DynamoDB) ClearBackfill(ctx context.Context, handed Request) error {
	if handed.Empty() {
		return nil
	}
	attrs := names(ownedCond)
	attrs["#bf"] = attrBackfill
	attrs["#bn"] = attrBackfillCount
	values := map[string]types.AttributeValue{":handed": requestSet(handed), ":me": str(d.opts.Owner), ":epoch": num(d.epoch)}
	counted := "attribute_not_exists(#bn)"
	if handed.Stamp > 0 {
		counted = "#bn = :n"
		values[":n"] = &types.AttributeValueMemberN{Value: strconv.FormatUint(handed.Stamp, 10)}
	}
	_, err := d.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.opts.Table),
		Key:                       d.key(),
		UpdateExpression:          aws.String("DELETE #bf :handed"),
		ConditionExpression:       aws.String(ownedCond + " AND " + counted),
		ExpressionAttributeNames:  attrs,
		ExpressionAttributeValues: values,
	})
	if isConditionFailed(err) {
		// Which condition: a request since (nothing to report) or the
		// lease (reported as before).
		if now, rerr := d.PendingBackfill(ctx); rerr == nil && now.Stamp != handed.Stamp {
			return ErrRequestedSince
		}
	}
	if err != nil {
		return fmt.Errorf("checkpoint: clear the backfill request of %s in table %s: %w", d.opts.Pipeline, d.opts.Table, err)
	}
	return nil
}
