package checkpoint

import "context"

// The kinds of store, by their checkpoint.store names
// (docs/configuration.md): file, the default outside AWS, and dynamodb.
func init() {
	Register("file", Kind{
		Open: func(_ context.Context, w Where) (Store, error) {
			f, err := OpenFile(w.Path, w.Pipeline)
			if err != nil {
				return nil, err
			}
			return f, nil
		},
		Read: readFileKind,
		Hold: holdFile,
		RequestBackfill: func(_ context.Context, w Where, r Request) error {
			return RequestBackfillFile(w.Path, w.Pipeline, r)
		},
		PendingBackfill: func(_ context.Context, w Where) (Request, error) {
			return PendingFile(w.Path, w.Pipeline)
		},
	})
	Register("dynamodb", Kind{
		Leased: true,
		Open: func(ctx context.Context, w Where) (Store, error) {
			client, err := NewDynamoDBClient(ctx)
			if err != nil {
				return nil, err
			}
			d, err := OpenDynamoDB(ctx, client, DynamoDBOptions{
				Table: w.Table, Pipeline: w.Pipeline, LeaseDuration: w.LeaseDuration, CreateTable: w.CreateTable, Log: w.Log,
			})
			if err != nil {
				return nil, err
			}
			return d, nil
		},
		Read: readDynamoDBKind,
		Hold: holdDynamoDB,
		RequestBackfill: func(ctx context.Context, w Where, r Request) error {
			client, err := NewDynamoDBClient(ctx)
			if err != nil {
				return err
			}
			return RequestBackfillDynamoDB(ctx, client, w.Table, w.Pipeline, r)
		},
		PendingBackfill: func(ctx context.Context, w Where) (Request, error) {
			client, err := NewDynamoDBClient(ctx)
			if err != nil {
				return Request{}, err
			}
			return PendingDynamoDB(ctx, client, w.Table, w.Pipeline)
		},
	})
}
