package mongodb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
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
// collections selected, the user's privileges on them, that a change
// stream opens on one of them, the oplog's window, and, where
// capture_mode asks for them, the collections' pre-images. Every failed
// line has its fix (checks.go words them).
func (s *Source) Check(ctx context.Context) []source.Check {
	if err := s.d.Connect(ctx); err != nil {
		return []source.Check{{Name: "source connection", Detail: err.Error(),
			Fix: "check source.url (hosts, user, password, tls) and that this host can reach the server"}}
	}
	defer s.d.Close(context.WithoutCancel(ctx))
	out := []source.Check{{Name: "source connection", OK: true, Detail: s.d.cfg.Connection.Redacted()}}

	var hello helloReply
	var helloErr string
	if err := s.d.client.Database("admin").RunCommand(ctx, bson.D{{Key: "isMaster", Value: 1}}).Decode(&hello); err != nil {
		helloErr = s.d.scrub(err)
	}
	deployment, replicated := deploymentCheck(hello, helloErr)
	out = append(out, deployment)
	at := len(out) - 1

	found, err := s.d.Discover(ctx)
	if err != nil {
		return append(out, source.Check{Name: "collections", Detail: err.Error(), Fix: "grant the user listDatabases and listCollections (the readAnyDatabase role has both)"})
	}
	if len(found) == 0 {
		out = append(out, source.Check{Name: "collections", Detail: "no collection matches source.tables",
			Fix: "list collections as database.collection regular expressions in source.tables"})
	} else {
		out = append(out, source.Check{Name: "collections", OK: true, Detail: fmt.Sprintf("%d: %s", len(found), listNames(found))})
	}

	st, stErr := s.d.connectionStatus(ctx)
	out = append(out, privilegesCheck(st, stErr, found, s.d.cfg.Scope))

	// A change stream on one selected collection, opened and closed: a
	// server that has change streams at all, and the user's changeStream
	// action there.
	if len(found) > 0 {
		stream := source.Check{Name: "change streams", OK: true, Detail: "a change stream opens on " + found[0]}
		db, coll, _ := strings.Cut(found[0], ".")
		cs, err := s.d.client.Database(db).Collection(coll).Watch(ctx, []bson.D{}, options.ChangeStream().SetMaxAwaitTime(1))
		if err != nil {
			stream.OK = false
			stream.Detail = "opening a change stream on " + found[0] + ": " + s.d.scrub(err)
			stream.Fix = fixPrivileges
			if !replicated {
				stream.Fix = "change streams need a replica set or a sharded cluster: " + fixReplicaSet
			}
		} else {
			_ = cs.Close(ctx)
			if !replicated && helloErr == "" {
				// mongod has no change streams without a replica set: this
				// is a test server (mongo-java-server), which run can read
				// but no production deployment is.
				out[at].Detail += "; this one opened a change stream all the same, which mongod does not: a test server " +
					"(such as mongo-java-server, on which run captures one collection per pipeline), not a production deployment"
			}
		}
		out = append(out, stream)
	}

	first, last, oplogErr := s.d.oplogSpan(ctx)
	out = append(out, oplogCheck(first, last, oplogErr))

	if mode := s.d.cfg.CaptureMode; wantsPreImages(mode) && len(found) > 0 {
		opts, err := s.d.collectionOptions(ctx, found)
		var listErr string
		if err != nil {
			listErr = s.d.scrub(err)
		}
		out = append(out, preImagesCheck(mode, found, opts, listErr))
	}
	return out
}

// connectionStatus reads the signed-in users and their privileges; the
// error is scrubbed ("" when read).
func (d *Driver) connectionStatus(ctx context.Context) (connectionStatus, string) {
	var st connectionStatus
	err := d.client.Database("admin").RunCommand(ctx, bson.D{{Key: "connectionStatus", Value: 1}, {Key: "showPrivileges", Value: true}}).Decode(&st)
	if err != nil {
		return st, d.scrub(err)
	}
	return st, ""
}

// oplogSpan reads the times of the oplog's first and newest entries; the
// error is scrubbed ("" when read).
func (d *Driver) oplogSpan(ctx context.Context) (first, last bson.Timestamp, errText string) {
	var e struct {
		TS bson.Timestamp `bson:"ts"`
	}
	oplog := d.client.Database("local").Collection("oplog.rs")
	for i, dir := range []int{1, -1} {
		err := oplog.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "$natural", Value: dir}}).SetProjection(bson.D{{Key: "ts", Value: 1}})).Decode(&e)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return first, last, "it has no entry"
		case err != nil:
			return first, last, d.scrub(err)
		}
		if i == 0 {
			first = e.TS
		} else {
			last = e.TS
		}
	}
	return first, last, ""
}

// collectionOptions reads the listCollections options of the collections
// named "db.collection", by name.
func (d *Driver) collectionOptions(ctx context.Context, colls []string) (map[string]bson.Raw, error) {
	byDB := map[string][]string{}
	for _, ns := range colls {
		db, coll, _ := strings.Cut(ns, ".")
		byDB[db] = append(byDB[db], coll)
	}
	out := map[string]bson.Raw{}
	for db, names := range byDB {
		specs, err := d.client.Database(db).ListCollectionSpecifications(ctx, bson.D{{Key: "name", Value: bson.D{{Key: "$in", Value: names}}}})
		if err != nil {
			return nil, err
		}
		for _, sp := range specs {
			out[db+"."+sp.Name] = sp.Options
		}
	}
	return out, nil
}

// Tables implements source.Lister. Each collection's problems are the
// privileges run would miss on it (find for its snapshot, changeStream
// for its stream); a collection without the pre-images capture_mode asks
// for is a warning (run publishes its before as null).
func (s *Source) Tables(ctx context.Context) (source.Inventory, error) {
	if err := s.d.Connect(ctx); err != nil {
		return source.Inventory{}, err
	}
	defer s.d.Close(context.WithoutCancel(ctx))
	var inv source.Inventory
	dbs, err := s.d.client.ListDatabaseNames(ctx, bson.D{})
	if err != nil {
		return inv, s.d.wrapErr("mongodb: listing databases: ", err)
	}
	st, stErr := s.d.connectionStatus(ctx)
	var preImagesOff []string
	for _, db := range dbs {
		if systemDatabase(db) {
			continue
		}
		specs, err := s.d.client.Database(db).ListCollectionSpecifications(ctx, bson.D{})
		if err != nil {
			return inv, s.d.wrapErr("mongodb: listing collections of "+db+": ", err)
		}
		for _, sp := range specs {
			c := sp.Name
			if strings.HasPrefix(c, "system.") {
				continue
			}
			inv.Existing = append(inv.Existing, db+"."+c)
			if sp.Type != "collection" || !s.d.filter.Match(db, c) {
				continue // a view or time-series collection: Discover's rule
			}
			n, err := s.d.client.Database(db).Collection(c).EstimatedDocumentCount(ctx)
			if err != nil {
				n = -1
			}
			info := source.TableInfo{Table: newTable(db, c), RowEstimate: n}
			if stErr == "" {
				if missing, _ := missingPrivileges(st, []string{db + "." + c}, s.d.cfg.Scope); len(missing) > 0 {
					info.Problems = append(info.Problems, "the user lacks "+strings.Join(missing, "; ")+
						"; fix: grant readAnyDatabase, or a role with find and changeStream on {db: \"\", collection: \"\"} (test-connection prints the commands)")
				}
			}
			if wantsPreImages(s.d.cfg.CaptureMode) && !preImagesOn(sp.Options) {
				preImagesOff = append(preImagesOff, db+"."+c)
			}
			inv.Tables = append(inv.Tables, info)
		}
	}
	slices.Sort(inv.Existing)
	slices.SortFunc(inv.Tables, func(a, b source.TableInfo) int {
		return strings.Compare(a.Table.ID.String(), b.Table.ID.String())
	})
	slices.Sort(preImagesOff)
	for _, ns := range preImagesOff {
		inv.Warnings = append(inv.Warnings, fmt.Sprintf("%s: pre-images are off, so capture_mode %s publishes its updates' and deletes' before as null; fix (MongoDB 6.0+): %s",
			ns, s.d.cfg.CaptureMode, preImageFix(ns)))
	}
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
