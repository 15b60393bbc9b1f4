package checkpoint

import "context"

// The kinds of store, by their checkpoint.store names
// (docs/configuration.md): file, the default outside AWS, and dynamodb.
func init() {
	Register("file", Kind{
		Open: func(_ context.Context, w Where) (Store, error) {
			return opened(OpenFile(w.Path, w.Pipeline))
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
			return opened(OpenDynamoDB(ctx, client, DynamoDBOptions{
				Table: w.Table, Pipeline: w.Pipeline, LeaseDuration: w.LeaseDuration, CreateTable: w.CreateTable, Log: w.Log,
			}))
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

// opened is an open's store as a Store: nil, not a nil *File or
// *DynamoDB, when it failed.
func opened[S Store](s S, err error) (Store, error) {
	if err != nil {
		return nil, err
	}
	return s, nil
}
