package mongodb

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/tributary-cdc/tributary/pkg/source"
)

// What test-connection and tables judge from the server's replies. Each
// function here reads a decoded reply and words one line of the report,
// so the wording is tested on the reply shapes MongoDB documents without
// a server that answers them (mongo-java-server answers few).

// oplogWarnHours is the oplog window below which the check warns: a
// pipeline stopped for longer than the window must snapshot again.
const oplogWarnHours = 24

// helloReply is what the checks read of hello/isMaster.
type helloReply struct {
	SetName string `bson:"setName"`
	Msg     string `bson:"msg"`
}

// fixReplicaSet is how a standalone mongod gets change streams.
const fixReplicaSet = "convert it to a one-node replica set: restart mongod with --replSet rs0, run rs.initiate() in mongosh, and add replicaSet=rs0 to source.url"

// deploymentCheck words hello's reply: change streams (MongoDB's and
// Debezium's) need a replica set or a sharded cluster; a standalone
// server fails with the conversion as its fix. replicated says which.
func deploymentCheck(h helloReply, helloErr string) (c source.Check, replicated bool) {
	switch {
	case helloErr != "":
		return source.Check{Name: "deployment", Detail: "the server's topology is unknown (isMaster: " + helloErr + ")",
			Fix: "change streams need a replica set or a sharded cluster; check that the user may run isMaster"}, false
	case h.SetName != "":
		return source.Check{Name: "deployment", OK: true, Detail: "replica set " + h.SetName}, true
	case h.Msg == "isdbgrid":
		return source.Check{Name: "deployment", OK: true, Detail: "sharded cluster (mongos)"}, true
	}
	return source.Check{Name: "deployment", Detail: "a standalone server: MongoDB has change streams on a replica set or a sharded cluster only",
		Fix: fixReplicaSet}, false
}

// connectionStatus is connectionStatus's reply with showPrivileges.
type connectionStatus struct {
	AuthInfo struct {
		Users []struct {
			User string `bson:"user"`
			DB   string `bson:"db"`
		} `bson:"authenticatedUsers"`
		Privileges []privilege `bson:"authenticatedUserPrivileges"`
	} `bson:"authInfo"`
}

// privilege is one of a user's privileges: actions on a resource.
type privilege struct {
	Resource struct {
		DB          *string `bson:"db"`
		Collection  *string `bson:"collection"`
		Cluster     bool    `bson:"cluster"`
		AnyResource bool    `bson:"anyResource"`
	} `bson:"resource"`
	Actions []string `bson:"actions"`
}

// allows says whether p grants action on db.coll, by MongoDB's rules for
// collection resources: "" for the database matches every database, ""
// for the collection every collection but system.* ones; anyResource
// matches everything. An empty db names the whole deployment (db and
// coll both "": the resource a cluster-wide change stream needs).
func (p privilege) allows(action, db, coll string) bool {
	if !slices.Contains(p.Actions, action) && !slices.Contains(p.Actions, "anyAction") {
		return false
	}
	r := p.Resource
	if r.AnyResource {
		return true
	}
	if r.Cluster || r.DB == nil || r.Collection == nil {
		return false
	}
	if db == "" { // the whole deployment
		return *r.DB == "" && *r.Collection == ""
	}
	dbOK := *r.DB == "" || *r.DB == db
	collOK := *r.Collection == coll || (*r.Collection == "" && !strings.HasPrefix(coll, "system."))
	return dbOK && collOK
}

// fixPrivileges is the grant the checks suggest: readAnyDatabase has find
// and changeStream on every database (a cluster-wide stream needs them
// on all of them), or a role of just those actions.
const fixPrivileges = `grant the user readAnyDatabase: db.getSiblingDB("admin").grantRolesToUser("<user>", [{role: "readAnyDatabase", db: "admin"}]); ` +
	`or a role of its own: db.getSiblingDB("admin").createRole({role: "tributaryCapture", privileges: [{resource: {db: "", collection: ""}, actions: ["find", "changeStream", "listCollections"]}, {resource: {cluster: true}, actions: ["listDatabases"]}], roles: []}) and grant that`

// missingPrivileges names what the signed-in users lack for the captured
// collections: find on each (the snapshot), and changeStream on the whole
// deployment (cluster scope: the stream covers every database) or on each
// collection (collection scope). ok is false when no user is signed in
// (access control off: the server checks nothing).
func missingPrivileges(st connectionStatus, colls []string, scope string) (missing []string, signedIn bool) {
	if len(st.AuthInfo.Users) == 0 {
		return nil, false
	}
	has := func(action, db, coll string) bool {
		return slices.ContainsFunc(st.AuthInfo.Privileges, func(p privilege) bool { return p.allows(action, db, coll) })
	}
	if scope == ScopeCluster {
		for _, a := range []string{"changeStream", "find"} {
			if !has(a, "", "") {
				missing = append(missing, a+` on the whole deployment ({db: "", collection: ""}: the change stream covers every database)`)
			}
		}
	}
	for _, ns := range colls {
		db, coll, _ := strings.Cut(ns, ".")
		for _, a := range []string{"find", "changeStream"} {
			if a == "changeStream" && scope == ScopeCluster {
				continue
			}
			if !has(a, db, coll) {
				missing = append(missing, a+" on "+ns)
			}
		}
	}
	return missing, true
}

// privilegesCheck words connectionStatus's reply for the captured
// collections.
func privilegesCheck(st connectionStatus, statusErr string, colls []string, scope string) source.Check {
	c := source.Check{Name: "privileges"}
	if statusErr != "" {
		c.Detail, c.Fix = "the user's privileges cannot be read (connectionStatus: "+statusErr+")", fixPrivileges
		return c
	}
	missing, signedIn := missingPrivileges(st, colls, scope)
	if !signedIn {
		c.OK, c.Detail = true, "no user is signed in and the server allowed the reads: it does not enforce access control"
		return c
	}
	var users []string
	for _, u := range st.AuthInfo.Users {
		users = append(users, u.User+"@"+u.DB)
	}
	if len(missing) > 0 {
		c.Detail = strings.Join(users, ", ") + " lacks " + strings.Join(missing, "; ")
		c.Fix = strings.ReplaceAll(fixPrivileges, "<user>", st.AuthInfo.Users[0].User)
		return c
	}
	c.OK = true
	c.Detail = strings.Join(users, ", ") + " has find and changeStream on the captured collections"
	if scope == ScopeCluster {
		c.Detail = strings.Join(users, ", ") + " has find and changeStream on the whole deployment"
	}
	return c
}

// oplogCheck words the oplog's window, the time between its first and
// newest entries. It is a warning, not a failure (run starts all the
// same): below oplogWarnHours the detail says how to keep more, since a
// pipeline stopped longer than the window has lost its resume point (the
// window of an oplog that has not filled yet is still growing). readErr
// is why the oplog could not be read.
func oplogCheck(first, last bson.Timestamp, readErr string) source.Check {
	c := source.Check{Name: "oplog window", OK: true}
	if readErr != "" {
		c.Detail = "not measured: local.oplog.rs cannot be read (" + readErr + "); a pipeline stopped longer than the window must snapshot again. " +
			"To see it here, grant the user read on the local database (Amazon DocumentDB has no oplog: its window is the change_stream_log_retention_duration parameter)"
		return c
	}
	if last.T < first.T {
		first, last = last, first
	}
	hours := float64(last.T-first.T) / 3600
	span := fmt.Sprintf("%.1f h of changes (%s to %s)", hours,
		time.Unix(int64(first.T), 0).UTC().Format(time.RFC3339), time.Unix(int64(last.T), 0).UTC().Format(time.RFC3339))
	if hours >= oplogWarnHours {
		c.Detail = "the oplog holds " + span + ": a pipeline stopped for less than that resumes where it stopped"
		return c
	}
	c.Detail = fmt.Sprintf("warning: the oplog holds only %s, under %d h (or it has not filled yet): a pipeline stopped for longer must snapshot again; "+
		"keep more with db.adminCommand({replSetResizeOplog: 1, minRetentionHours: 48}) on each member "+
		"(or size: <megabytes>; mongod --oplogMinRetentionHours 48), on Atlas the cluster's Minimum Oplog Window", span, oplogWarnHours)
	return c
}

// preImagesOn reads a collection's options (listCollections):
// changeStreamPreAndPostImages.enabled (MongoDB 6.0+).
func preImagesOn(options bson.Raw) bool {
	v, err := options.LookupErr("changeStreamPreAndPostImages", "enabled")
	if err != nil {
		return false
	}
	b, ok := v.BooleanOK()
	return ok && b
}

// wantsPreImages says whether capture_mode asks the server for pre-images.
func wantsPreImages(mode string) bool {
	return mode == ModeUpdateFullWithPreImage || mode == ModeChangeStreamsPreImage
}

// preImageFix is the command that turns pre-images on for ns.
func preImageFix(ns string) string {
	db, coll, _ := strings.Cut(ns, ".")
	return fmt.Sprintf(`db.getSiblingDB(%q).runCommand({collMod: %q, changeStreamPreAndPostImages: {enabled: true}})`, db, coll)
}

// preImagesCheck words which captured collections keep no pre-images
// though capture_mode asks for them (their messages' before is null);
// options is each collection's listCollections options by
// "db.collection".
func preImagesCheck(mode string, colls []string, options map[string]bson.Raw, listErr string) source.Check {
	c := source.Check{Name: "pre-images"}
	if listErr != "" {
		c.Detail, c.Fix = "the collections' options cannot be read (listCollections: "+listErr+")", "grant the user listCollections on the captured databases"
		return c
	}
	var off []string
	for _, ns := range colls {
		if !preImagesOn(options[ns]) {
			off = append(off, ns)
		}
	}
	if len(off) == 0 {
		c.OK, c.Detail = true, fmt.Sprintf("on for the %d captured collections (capture_mode %s)", len(colls), mode)
		return c
	}
	verb := "keep"
	if len(off) == 1 {
		verb = "keeps"
	}
	c.Detail = fmt.Sprintf("capture_mode %s asks for pre-images, but %s %s none: their updates' and deletes' before would be null",
		mode, listNames(off), verb)
	fixes := make([]string, 0, len(off))
	for i, ns := range off {
		if i == 3 {
			fixes = append(fixes, fmt.Sprintf("and the same for the %d others", len(off)-3))
			break
		}
		fixes = append(fixes, preImageFix(ns))
	}
	c.Fix = "MongoDB 6.0 or later: " + strings.Join(fixes, "; ")
	return c
}

// listNames names collections, the first ten of them.
func listNames(names []string) string {
	if len(names) > 10 {
		return strings.Join(names[:10], ", ") + fmt.Sprintf(" and %d more", len(names)-10)
	}
	return strings.Join(names, ", ")
}
