package mongodb

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/tributary-cdc/tributary/pkg/change"
	"github.com/tributary-cdc/tributary/pkg/source"
)

// What the commands ask (test-connection, tables, drop): each connects,
// reads and disconnects.

var (
	_ source.Checker   = (*Source)(nil)
	_ source.Lister    = (*Source)(nil)
	_ source.Describer = (*Source)(nil)
	_ source.Dropper   = (*Source)(nil)
)

// Check implements source.Checker: the connection, the deployment
// (change streams need a replica set or a sharded cluster), the
// collections selected, and that a change stream opens on them (the
// user's changeStream action).
func (s *Source) Check(ctx context.Context) []source.Check {
	if err := s.d.Connect(ctx); err != nil {
		return []source.Check{{Name: "source connection", Detail: err.Error(),
			Fix: "check source.url (hosts, user, password, tls) and that this host can reach the server"}}
	}
	defer s.d.Close(context.WithoutCancel(ctx))
	out := []source.Check{{Name: "source connection", OK: true, Detail: s.d.cfg.Connection.Redacted()}}

	var hello bson.M
	err := s.d.client.Database("admin").RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}).Decode(&hello)
	deployment := "standalone server"
	replicated := false
	switch {
	case err != nil:
		deployment = "unknown (isMaster: " + s.d.scrub(err) + ")"
	case hello["setName"] != nil:
		deployment, replicated = fmt.Sprintf("replica set %v", hello["setName"]), true
	case hello["msg"] == "isdbgrid":
		deployment, replicated = "sharded cluster (mongos)", true
	}

	found, err := s.d.Discover(ctx)
	if err != nil {
		return append(out, source.Check{Name: "collections", Detail: err.Error(), Fix: "grant the user listDatabases and listCollections"})
	}
	if len(found) == 0 {
		out = append(out, source.Check{Name: "collections", Detail: "no collection matches source.tables",
			Fix: "list collections as database.collection regular expressions in source.tables"})
	} else {
		out = append(out, source.Check{Name: "collections", OK: true, Detail: fmt.Sprintf("%d: %s", len(found), strings.Join(found, ", "))})
	}

	// A change stream on one selected collection, opened and closed: the
	// changeStream action, and a server that has change streams at all.
	stream := source.Check{Name: "change streams", OK: true, Detail: deployment}
	if len(found) > 0 {
		db, coll, _ := strings.Cut(found[0], ".")
		cs, err := s.d.client.Database(db).Collection(coll).Watch(ctx, []bson.D{}, options.ChangeStream().SetMaxAwaitTime(1))
		if err != nil {
			stream.OK = false
			stream.Detail = fmt.Sprintf("%s: opening a change stream on %s: %s", deployment, found[0], s.d.scrub(err))
			stream.Fix = "change streams need a replica set or a sharded cluster (mongod --replSet), and the user needs the changeStream and find actions on the captured collections (the read role)"
		} else {
			_ = cs.Close(ctx)
			if !replicated {
				stream.Detail += " that opens change streams (a test server: MongoDB itself needs a replica set)"
			}
		}
	}
	return append(out, stream)
}

// Tables implements source.Lister.
func (s *Source) Tables(ctx context.Context) (source.Inventory, error) {
	if err := s.d.Connect(ctx); err != nil {
		return source.Inventory{}, err
	}
	defer s.d.Close(context.WithoutCancel(ctx))
	var inv source.Inventory
	dbs, err := s.d.client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return inv, fmt.Errorf("mongodb: listing databases: %s", s.d.scrub(err))
	}
	for _, db := range dbs {
		if systemDatabase(db) {
			continue
		}
		colls, err := s.d.client.Database(db).ListCollectionNames(ctx, bson.D{})
		if err != nil {
			return inv, fmt.Errorf("mongodb: listing collections of %s: %s", db, s.d.scrub(err))
		}
		for _, c := range colls {
			if strings.HasPrefix(c, "system.") {
				continue
			}
			inv.Existing = append(inv.Existing, db+"."+c)
			if !s.d.filter.Match(db, c) {
				continue
			}
			n, err := s.d.client.Database(db).Collection(c).EstimatedDocumentCount(ctx)
			if err != nil {
				n = -1
			}
			inv.Tables = append(inv.Tables, source.TableInfo{Table: newTable(db, c), RowEstimate: n})
		}
	}
	slices.Sort(inv.Existing)
	slices.SortFunc(inv.Tables, func(a, b source.TableInfo) int {
		return strings.Compare(a.Table.ID.String(), b.Table.ID.String())
	})
	for _, p := range s.d.cfg.Include {
		re, err := regexp.Compile("(?i)^(?:" + p + ")$")
		if err != nil {
			continue
		}
		if !slices.ContainsFunc(inv.Existing, re.MatchString) {
			inv.Unmatched = append(inv.Unmatched, p)
		}
	}
	return inv, nil
}

// Describe implements source.Describer: every selected collection has
// the same three columns (_id, the document, an update's description).
func (s *Source) Describe(ctx context.Context) ([]*change.Table, error) {
	inv, err := s.Tables(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*change.Table, len(inv.Tables))
	for i, t := range inv.Tables {
		out[i] = t.Table
	}
	return out, nil
}

// Leftovers implements source.Dropper: a mongodb pipeline leaves nothing
// on the server (no slot, no signal collection; its watermarks are
// operation times).
func (s *Source) Leftovers(context.Context) ([]source.Leftover, error) { return nil, nil }

// Drop implements source.Dropper: there is nothing to remove.
func (s *Source) Drop(context.Context) ([]source.Leftover, error) { return nil, nil }
