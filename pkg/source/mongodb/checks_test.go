package mongodb

import (
	"strings"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The replies below are written after the shapes MongoDB's manual gives
// for isMaster, connectionStatus (showPrivileges), the oplog and
// listCollections; mongo-java-server answers few of them.

func decodeReply[T any](t *testing.T, js string) T {
	t.Helper()
	var v T
	if err := bson.UnmarshalExtJSON([]byte(js), false, &v); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func rawDoc(t *testing.T, js string) bson.Raw {
	t.Helper()
	d := decodeReply[bson.D](t, js)
	b, err := bson.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A replica set member and a mongos pass; a standalone server fails,
// with the conversion to a one-node replica set as its fix.
func TestDeploymentCheck(t *testing.T) {
	rs := decodeReply[helloReply](t, `{"ismaster": true, "setName": "rs0", "setVersion": 3, "hosts": ["db1:27017", "db2:27017"], "primary": "db1:27017", "maxWireVersion": 21, "ok": 1}`)
	if c, repl := deploymentCheck(rs, ""); !c.OK || !repl || c.Detail != "replica set rs0" {
		t.Errorf("replica set: %+v %v", c, repl)
	}
	mongos := decodeReply[helloReply](t, `{"ismaster": true, "msg": "isdbgrid", "maxWireVersion": 21, "ok": 1}`)
	if c, repl := deploymentCheck(mongos, ""); !c.OK || !repl || !strings.Contains(c.Detail, "sharded cluster") {
		t.Errorf("mongos: %+v %v", c, repl)
	}
	standalone := decodeReply[helloReply](t, `{"ismaster": true, "maxBsonObjectSize": 16777216, "maxWireVersion": 21, "ok": 1}`)
	c, repl := deploymentCheck(standalone, "")
	if c.OK || repl || !strings.Contains(c.Detail, "standalone") || !strings.Contains(c.Fix, "rs.initiate()") || !strings.Contains(c.Fix, "--replSet") {
		t.Errorf("standalone: %+v %v", c, repl)
	}
	if c, _ := deploymentCheck(helloReply{}, "Unauthorized"); c.OK || !strings.Contains(c.Detail, "Unauthorized") || c.Fix == "" {
		t.Errorf("isMaster refused: %+v", c)
	}
}

const (
	readAnyDatabase = `{"authInfo": {"authenticatedUsers": [{"user": "tributary", "db": "admin"}],
 "authenticatedUserRoles": [{"role": "readAnyDatabase", "db": "admin"}],
 "authenticatedUserPrivileges": [
  {"resource": {"cluster": true}, "actions": ["listDatabases"]},
  {"resource": {"db": "", "collection": ""}, "actions": ["changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections", "listIndexes", "planCacheRead"]},
  {"resource": {"db": "", "collection": "system.js"}, "actions": ["changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections", "listIndexes", "planCacheRead"]}]}, "ok": 1}`
	readOnShop = `{"authInfo": {"authenticatedUsers": [{"user": "capture", "db": "shop"}],
 "authenticatedUserRoles": [{"role": "read", "db": "shop"}],
 "authenticatedUserPrivileges": [
  {"resource": {"db": "shop", "collection": ""}, "actions": ["changeStream", "collStats", "dbHash", "dbStats", "find", "killCursors", "listCollections", "listIndexes", "planCacheRead"]},
  {"resource": {"db": "shop", "collection": "system.js"}, "actions": ["find"]}]}, "ok": 1}`
	oneCollection = `{"authInfo": {"authenticatedUsers": [{"user": "capture", "db": "admin"}],
 "authenticatedUserRoles": [{"role": "ordersCapture", "db": "admin"}],
 "authenticatedUserPrivileges": [
  {"resource": {"db": "shop", "collection": "orders"}, "actions": ["changeStream", "find"]},
  {"resource": {"db": "shop", "collection": "carts"}, "actions": ["find"]}]}, "ok": 1}`
	root = `{"authInfo": {"authenticatedUsers": [{"user": "admin", "db": "admin"}],
 "authenticatedUserRoles": [{"role": "root", "db": "admin"}],
 "authenticatedUserPrivileges": [{"resource": {"anyResource": true}, "actions": ["anyAction"]}]}, "ok": 1}`
	noUser = `{"authInfo": {"authenticatedUsers": [], "authenticatedUserRoles": []}, "ok": 1}`
)

// The privileges line: readAnyDatabase (or root) passes for the
// deployment-wide change stream run opens; read on one database does not
// (the stream covers every database) though it is enough for a
// collection's own stream; a missing action is named with its collection
// and the grant to run; no signed-in user is a server without access
// control.
func TestPrivilegesCheck(t *testing.T) {
	colls := []string{"shop.orders", "shop.carts"}
	for _, tc := range []struct {
		name, reply, scope string
		colls              []string
		ok                 bool
		want, notWant      []string
	}{
		{"readAnyDatabase", readAnyDatabase, ScopeCluster, colls, true, []string{"tributary@admin has find and changeStream on the whole deployment"}, nil},
		{"root", root, ScopeCluster, colls, true, nil, nil},
		{"read on the database, cluster stream", readOnShop, ScopeCluster, colls, false,
			[]string{"capture@shop lacks changeStream on the whole deployment", "find on the whole deployment", `grantRolesToUser("capture", [{role: "readAnyDatabase"`, "createRole"},
			[]string{"shop.orders"}},
		{"read on the database, collection stream", readOnShop, ScopeCollection, colls, true, []string{"on the captured collections"}, nil},
		{"read on another database", readOnShop, ScopeCollection, []string{"shop.orders", "crm.people"}, false,
			[]string{"lacks find on crm.people; changeStream on crm.people"}, []string{"shop.orders"}},
		{"system collections are not in a database's resource", readOnShop, ScopeCollection, []string{"shop.system.views"}, false,
			[]string{"changeStream on shop.system.views"}, nil},
		{"a role on one collection", oneCollection, ScopeCollection, colls, false,
			[]string{"lacks changeStream on shop.carts"}, []string{"find on shop.carts", "shop.orders"}},
		{"no user signed in", noUser, ScopeCluster, colls, true, []string{"does not enforce access control"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := privilegesCheck(decodeReply[connectionStatus](t, tc.reply), "", tc.colls, tc.scope)
			if c.Name != "privileges" || c.OK != tc.ok || (!c.OK && c.Fix == "") {
				t.Fatalf("%+v", c)
			}
			text := c.Detail + " | " + c.Fix
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("lacks %q: %s", w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(c.Detail, w) {
					t.Errorf("names %q: %s", w, c.Detail)
				}
			}
		})
	}
	if c := privilegesCheck(connectionStatus{}, "CommandNotFound", colls, ScopeCluster); c.OK || !strings.Contains(c.Detail, "CommandNotFound") || c.Fix == "" {
		t.Errorf("connectionStatus refused: %+v", c)
	}
}

// The oplog's window in hours from its first and newest entries: a day
// or more passes quietly; less passes with a warning that says how to
// keep more; an oplog that cannot be read is not measured, and says why.
func TestOplogCheck(t *testing.T) {
	first := decodeReply[struct {
		TS bson.Timestamp `bson:"ts"`
	}](t, `{"ts": {"$timestamp": {"t": 1765000000, "i": 1}}, "op": "n", "ns": "", "o": {"msg": "initiating set"}}`).TS
	later := func(h uint32) bson.Timestamp { return bson.Timestamp{T: first.T + h*3600 + 1800, I: 4} }

	c := oplogCheck(first, later(30), "")
	if !c.OK || !strings.Contains(c.Detail, "30.5 h of changes (2025-12-06T05:46:40Z to ") || strings.Contains(c.Detail, "warning") {
		t.Errorf("30 h: %+v", c)
	}
	c = oplogCheck(first, later(2), "")
	if !c.OK || !strings.HasPrefix(c.Detail, "warning: the oplog holds only 2.5 h") || !strings.Contains(c.Detail, "under 24 h") ||
		!strings.Contains(c.Detail, "replSetResizeOplog") || !strings.Contains(c.Detail, "Minimum Oplog Window") {
		t.Errorf("2 h: %+v", c)
	}
	c = oplogCheck(bson.Timestamp{}, bson.Timestamp{}, "(Unauthorized) not authorized on local to execute command")
	if !c.OK || !strings.Contains(c.Detail, "not measured") || !strings.Contains(c.Detail, "Unauthorized") || !strings.Contains(c.Detail, "read on the local database") {
		t.Errorf("unreadable: %+v", c)
	}
}

// Pre-images, asked for by the *_with_pre_image capture modes, are read
// from each collection's changeStreamPreAndPostImages option; each
// collection without them is named with its collMod command.
func TestPreImagesCheck(t *testing.T) {
	if !wantsPreImages(ModeUpdateFullWithPreImage) || !wantsPreImages(ModeChangeStreamsPreImage) || wantsPreImages(ModeUpdateFull) || wantsPreImages(ModeChangeStreams) {
		t.Fatal("wantsPreImages")
	}
	on := rawDoc(t, `{"changeStreamPreAndPostImages": {"enabled": true}}`)
	off := rawDoc(t, `{"changeStreamPreAndPostImages": {"enabled": false}, "validator": {"qty": {"$gte": 0}}}`)
	none := rawDoc(t, `{}`)
	if !preImagesOn(on) || preImagesOn(off) || preImagesOn(none) || preImagesOn(nil) {
		t.Fatal("preImagesOn")
	}
	opts := map[string]bson.Raw{"shop.orders": on, "shop.carts": off, "crm.people": none}
	c := preImagesCheck(ModeUpdateFullWithPreImage, []string{"shop.orders"}, opts, "")
	if !c.OK || !strings.Contains(c.Detail, "on for the 1 captured collections") {
		t.Errorf("all on: %+v", c)
	}
	c = preImagesCheck(ModeChangeStreamsPreImage, []string{"crm.people", "shop.carts", "shop.orders", "shop.gone"}, opts, "")
	if c.OK || !strings.Contains(c.Detail, "but crm.people, shop.carts, shop.gone keep none") || !strings.Contains(c.Detail, "before would be null") {
		t.Errorf("some off: %+v", c)
	}
	if want := `db.getSiblingDB("crm").runCommand({collMod: "people", changeStreamPreAndPostImages: {enabled: true}}); ` +
		`db.getSiblingDB("shop").runCommand({collMod: "carts", changeStreamPreAndPostImages: {enabled: true}})`; !strings.Contains(c.Fix, want) {
		t.Errorf("fix %q, want %q", c.Fix, want)
	}
	if c := preImagesCheck(ModeChangeStreamsPreImage, []string{"a.b"}, nil, "Unauthorized"); c.OK || !strings.Contains(c.Fix, "listCollections") {
		t.Errorf("listCollections refused: %+v", c)
	}
}
