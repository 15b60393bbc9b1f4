// Package awstest points AWS SDK clients in tests at the local AWS emulator
// (moto on 127.0.0.1:5000, started by `make services-up`) through the SDK's
// standard environment, and makes the few resources tests need there.
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

// Env skips t under -short, fails it when the emulator does not answer,
// and sets the SDK environment (endpoint, region, dummy credentials) for
// the rest of t, so code that builds clients from the standard environment
// talks to the emulator. It returns an SDK config built from that
// environment.
func Env(t testing.TB) aws.Config {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the AWS emulator of `make services-up` (moto on 127.0.0.1:5000)")
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:5000", 2*time.Second)
	if err != nil {
		t.Fatalf("AWS emulator not reachable (run `make services-up`): %v", err)
	}
	c.Close()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL":            Endpoint,
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
