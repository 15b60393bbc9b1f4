package avro_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"

	"github.com/tributary-cdc/tributary/pkg/debezium/avro"
)

// TestConfluentCheckAsksToRegister: the check asks the test registry
// (Apicurio 2.4.2, which lets anyone register) to register under a subject
// of the pipeline's prefix and passes, saying so; the subject has no
// version afterwards (nothing registered). The check with only keys in
// Avro asks under a -key subject.
func TestConfluentCheckAsksToRegister(t *testing.T) {
	url := registryURL(t)
	ctx := context.Background()
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("regcheck%d", time.Now().UnixNano())
	for _, key := range []bool{false, true} {
		probe := avro.NewProbe(prefix, "", key)
		want := prefix + ".tributary-permission-check-value"
		if key {
			want = prefix + ".tributary-permission-check-key"
		}
		if probe.Subject != want || probe.Prefix != prefix+"." {
			t.Fatalf("probe %+v, want subject %s under %s.", probe, want, prefix)
		}
		c := reg.Check(ctx, probe)
		if !c.OK || !strings.Contains(c.Detail, "may register under "+prefix+".") || !strings.Contains(c.Detail, "nothing registered") {
			t.Errorf("check %+v, want ok saying it may register under %s.", c, prefix)
		}
		t.Logf("%s: %s", probe.Subject, c.Detail)
		resp, err := http.Get(url + "/subjects/" + probe.Subject + "/versions")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("subject %s after the check: HTTP %d %s, want 404 (nothing registered)", probe.Subject, resp.StatusCode, body)
		}
	}
	var subjects []string
	resp, err := http.Get(url + "/subjects")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&subjects)
	resp.Body.Close()
	for _, s := range subjects {
		if strings.HasPrefix(s, prefix) {
			t.Errorf("the check left subject %s in the registry", s)
		}
	}

	// With destination.topic the probe is under the topic's name.
	if p := avro.NewProbe("", "all-changes", false); p.Subject != "all-changes.tributary-permission-check-value" || p.Prefix != "all-changes" {
		t.Errorf("probe of destination.topic: %+v", p)
	}
}

// TestConfluentCheckRegisterDenied: a registry that lets the user read but
// not register (Confluent's answer to a denied write: HTTP 403, error code
// 40301) fails the check with the grant to add, in Confluent's, Karapace's,
// Redpanda's and Apicurio's words; 401 asks for the credentials. The test
// registry does not authorize at all, so these answers come from a server
// of this test: the refusals a registry with authorization gives.
func TestConfluentCheckRegisterDenied(t *testing.T) {
	var posted []string
	status := http.StatusForbidden
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
		if r.Method == http.MethodGet && r.URL.Path == "/subjects" {
			io.WriteString(w, `["shop.public.orders-value"]`)
			return
		}
		body, _ := io.ReadAll(r.Body)
		posted = append(posted, r.Method+" "+r.URL.Path+" "+string(body))
		w.WriteHeader(status)
		subject := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/subjects/"), "/versions")
		if status == http.StatusForbidden {
			fmt.Fprintf(w, `{"error_code":40301,"message":"User is denied operation Write on Subject: %s"}`, subject)
		} else {
			io.WriteString(w, `{"error_code":401,"message":"Unauthorized"}`)
		}
	}))
	defer srv.Close()
	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: srv.URL, Username: "tributary", Password: "s3cret-never-shown"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := reg.Check(ctx, avro.NewProbe("shop", "", false))
	if c.OK || !strings.Contains(c.Detail, "1 subjects readable, but may not register") ||
		!strings.Contains(c.Detail, "User is denied operation Write on Subject: shop.tributary-permission-check-value") {
		t.Errorf("denied check: %+v", c)
	}
	for _, w := range []string{"grant user tributary write and read on the subjects beginning \"shop.\"",
		"DeveloperWrite role on Subject:shop. with --prefix", "SUBJECT_WRITE and SUBJECT_READ on subject 'shop.*'",
		"operation Write on resource 'Subject:shop.*'", "--allow-principal tributary --operation write,read --registry-subject shop. --resource-pattern-type prefixed",
		"sr-developer"} {
		if !strings.Contains(c.Fix, w) {
			t.Errorf("fix lacks %q: %s", w, c.Fix)
		}
	}
	if len(posted) != 1 || !strings.HasPrefix(posted[0], "POST /subjects/shop.tributary-permission-check-value/versions ") ||
		strings.Contains(posted[0], `"type"`) {
		t.Errorf("requests %q, want one POST of a schema that is not Avro", posted)
	}

	status = http.StatusUnauthorized
	c = reg.Check(ctx, avro.NewProbe("shop", "", false))
	if c.OK || !strings.Contains(c.Detail, "HTTP 401") || !strings.Contains(c.Fix, "username and password") {
		t.Errorf("unauthorized check: %+v", c)
	}
	if strings.Contains(c.Detail+c.Fix, "s3cret") {
		t.Errorf("the check shows the password: %+v", c)
	}
}

// TestGlueCheckAsksToRegister: against moto's Glue registry the check
// looks up and asks to register a schema of the pipeline's prefix that
// does not exist, and passes; that schema does not exist afterwards.
func TestGlueCheckAsksToRegister(t *testing.T) {
	registry := motoGlue(t)
	ctx := context.Background()
	reg, err := avro.NewGlue(ctx, avro.GlueOptions{RegistryName: registry})
	if err != nil {
		t.Fatal(err)
	}
	c := reg.Check(ctx, avro.NewProbe("shop", "", false))
	if !c.OK || !strings.Contains(c.Detail, "may look up schemas and register versions") || !strings.Contains(c.Detail, "nothing registered") {
		t.Errorf("check %+v, want ok saying it may register", c)
	}
	t.Log(c.Detail)
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// moto does not serve ListSchemas: the probe's schema is asked for.
	_, err = glue.NewFromConfig(cfg).GetSchema(ctx, &glue.GetSchemaInput{SchemaId: &gluetypes.SchemaId{
		RegistryName: aws.String(registry), SchemaName: aws.String("shop.tributary-permission-check-value")}})
	var notFound *gluetypes.EntityNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("the probe's schema after the check: %v, want EntityNotFoundException (nothing created)", err)
	}
}

// TestGlueCheckRegisterDenied: a role that may read the registry but not
// register fails the check with the IAM grant to add. moto does not
// enforce IAM, so the denials are a server of this test answering as Glue
// does (AccessDeniedException): a fault no emulator here produces.
func TestGlueCheckRegisterDenied(t *testing.T) {
	deny := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		action := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSGlue.")
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch {
		case deny[action]:
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"__type":"AccessDeniedException","Message":"User: arn:aws:sts::111122223333:assumed-role/task/x is not authorized to perform: glue:%s on resource: arn:aws:glue:eu-west-1:111122223333:schema/shop-schemas/shop.tributary-permission-check-value"}`, action)
		case action == "GetRegistry":
			io.WriteString(w, `{"RegistryName":"shop-schemas","Status":"AVAILABLE"}`)
		default:
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"EntityNotFoundException","Message":"Schema is not found."}`)
		}
	}))
	defer srv.Close()
	t.Setenv("AWS_ENDPOINT_URL", srv.URL)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	ctx := context.Background()
	reg, err := avro.NewGlue(ctx, avro.GlueOptions{RegistryName: "shop-schemas", Region: "eu-west-1"})
	if err != nil {
		t.Fatal(err)
	}
	probe := avro.NewProbe("shop", "", false)
	if c := reg.Check(ctx, probe); !c.OK {
		t.Fatalf("allowed: %+v", c)
	}

	deny["RegisterSchemaVersion"] = true
	c := reg.Check(ctx, probe)
	if c.OK || !strings.Contains(c.Detail, "may not register schema versions") || !strings.Contains(c.Detail, "not authorized to perform: glue:RegisterSchemaVersion") ||
		!strings.Contains(c.Fix, "glue:RegisterSchemaVersion and glue:CreateSchema on the registry and its schemas") ||
		!strings.Contains(c.Fix, "arn:aws:glue:eu-west-1:<account>:registry/shop-schemas and arn:aws:glue:eu-west-1:<account>:schema/shop-schemas/*") {
		t.Errorf("register denied: %+v", c)
	}

	deny["GetSchemaByDefinition"] = true
	c = reg.Check(ctx, probe)
	if c.OK || !strings.Contains(c.Detail, "its schemas may not be looked up") || !strings.Contains(c.Fix, "glue:GetSchemaByDefinition and glue:GetSchemaVersion") {
		t.Errorf("lookup denied: %+v", c)
	}
}

// TestConfluentRedirectStaysOnItsHost: a registry that redirects to
// another host or port (or scheme) is not followed, so its credentials
// go nowhere else; a redirect on the registry's own host and scheme is.
func TestConfluentRedirectStaysOnItsHost(t *testing.T) {
	var elsewhere []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere = append(elsewhere, r.Method+" "+r.URL.Path+" auth="+r.Header.Get("Authorization"))
		io.WriteString(w, `[]`)
	}))
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/moved/subjects":
			w.Header().Set("Content-Type", "application/vnd.schemaregistry.v1+json")
			io.WriteString(w, `["shop.public.orders-value"]`)
		case r.URL.Query().Get("away") != "":
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		default:
			http.Redirect(w, r, "/moved"+r.URL.Path, http.StatusTemporaryRedirect)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	reg, err := avro.NewConfluent(avro.ConfluentOptions{URL: srv.URL + "/?away=1", Username: "tributary", Password: "s3cret-never-shown"})
	if err != nil {
		t.Fatal(err)
	}
	c := reg.Check(ctx, avro.NewProbe("shop", "", false))
	if c.OK || !strings.Contains(c.Detail, "does not follow") {
		t.Errorf("check through a redirect to another port: %+v", c)
	}
	if len(elsewhere) != 0 {
		t.Errorf("the other server was sent %q", elsewhere)
	}

	reg, err = avro.NewConfluent(avro.ConfluentOptions{URL: srv.URL, Username: "tributary", Password: "s3cret-never-shown"})
	if err != nil {
		t.Fatal(err)
	}
	if c := reg.Check(ctx, avro.NewProbe("shop", "", false)); !strings.Contains(c.Detail, "1 subjects readable") {
		t.Errorf("check through a redirect on the registry's own host: %+v", c)
	}
}
