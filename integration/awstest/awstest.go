// Package awstest points AWS SDK clients in tests at the local AWS emulator
// (moto on 127.0.0.1:5000, started by `make services-up`) through the SDK's
// standard environment, and makes the few resources tests need there. The
// checkpoint store's tests also run against a second DynamoDB engine,
// dynalite on 127.0.0.1:4567 (ForEachDynamoDB).
package awstest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// Endpoint is the emulator's address.
const Endpoint = "http://127.0.0.1:5000"

// Engine is a server that answers the DynamoDB API.
type Engine struct {
	Name string // the subtest's name
	Addr string // host:port
	// Transactions says the engine has TransactWriteItems; dynalite has
	// not, so the store's paths that need it (checkpoints over 400 KB,
	// drop) are checked against moto only.
	Transactions bool
	// SerialConditions says the engine checks a conditional write's
	// condition and applies the write as one step per item, as DynamoDB
	// does. moto's server runs each request on its own thread with no
	// lock around the two, so two concurrent writes can both pass one
	// condition there; dynalite locks the item.
	SerialConditions bool
}

// Endpoint is the engine's URL, for AWS_ENDPOINT_URL.
func (e Engine) Endpoint() string { return "http://" + e.Addr }

var (
	// Moto is the AWS emulator: DynamoDB among every other service.
	Moto = Engine{Name: "moto", Addr: "127.0.0.1:5000", Transactions: true}
	// Dynalite is an independent open-source DynamoDB server written
	// against the live service, a second opinion on moto's emulation of
	// conditional writes.
	Dynalite = Engine{Name: "dynalite", Addr: "127.0.0.1:4567", SerialConditions: true}
)

// DynamoDBEngines are the engines the checkpoint store's tests run against.
var DynamoDBEngines = []Engine{Moto, Dynalite}

// ForEachDynamoDB runs f as one subtest per DynamoDB engine, named after
// it ("moto", "dynalite"), each with the SDK environment pointing at that
// engine (EnvAt).
func ForEachDynamoDB(t *testing.T, f func(t *testing.T, e Engine)) {
	t.Helper()
	for _, e := range DynamoDBEngines {
		t.Run(e.Name, func(t *testing.T) {
			EnvAt(t, e)
			f(t, e)
		})
	}
}

// NeedTransactions skips t on an engine without TransactWriteItems, saying
// so.
func NeedTransactions(t testing.TB, e Engine) {
	t.Helper()
	if !e.Transactions {
		t.Skipf("%s has no TransactWriteItems; this path is checked against moto", e.Name)
	}
}

// NeedSerialConditions skips t on an engine whose conditional writes race
// each other (SerialConditions), saying so: a test of writers racing on one
// item would check the engine there, not the code.
func NeedSerialConditions(t testing.TB, e Engine) {
	t.Helper()
	if !e.SerialConditions {
		t.Skipf("%s applies concurrent conditional writes to one item without serialising them, unlike DynamoDB; this race is checked against dynalite", e.Name)
	}
}

// Env skips t under -short, fails it when the emulator does not answer,
// and sets the SDK environment (endpoint, region, dummy credentials) for
// the rest of t, so code that builds clients from the standard environment
// talks to the emulator. It returns an SDK config built from that
// environment.
func Env(t testing.TB) aws.Config {
	t.Helper()
	return EnvAt(t, Moto)
}

// EnvAt is Env for the DynamoDB engine e: requests for every AWS service go
// to it, so it suits tests that use DynamoDB alone when e is not moto.
func EnvAt(t testing.TB, e Engine) aws.Config {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s of `make services-up` on %s", e.Name, e.Addr)
	}
	c, err := net.DialTimeout("tcp", e.Addr, 2*time.Second)
	if err != nil {
		t.Fatalf("%s not reachable on %s (run `make services-up`): %v", e.Name, e.Addr, err)
	}
	c.Close()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            e.Endpoint(),
		"AWS_REGION":                  "us-east-1",
		"AWS_ACCESS_KEY_ID":           "test",
		"AWS_SECRET_ACCESS_KEY":       "test",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
	cfg, err := awsconfig.LoadDefaultConfig(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// Name returns a name unique to this test run, for parameters and queues
// in the shared emulator: prefix plus a random suffix.
func Name(prefix string) string {
	return fmt.Sprintf("%s%d-%06d", prefix, os.Getpid(), rand.IntN(1000000))
}
