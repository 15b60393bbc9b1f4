// Package pipelines loads pipeline documents for the Lambda functions from
// SSM Parameter Store, by pipeline name: <prefix><name>. One function
// serves every pipeline, so a document is confined to its own secrets:
// its ${ssm:…} references may name only <secret root><name>/… parameters,
// and ${env:…} (the function's own environment) is refused.
package pipelines

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	// The source types' rules (source.url, their own settings) are the
	// drivers', registered by pkg/capture: a document validates here as
	// it does in the CLI.
	_ "github.com/tributary-cdc/tributary/pkg/capture"
	"github.com/tributary-cdc/tributary/pkg/config"
)

// DefaultParameterPrefix is where pipeline documents live in SSM.
const DefaultParameterPrefix = "/tributary/pipelines/"

// DefaultSecretRoot is where each pipeline's secrets live:
// <root><name>/….
const DefaultSecretRoot = "/tributary/"

// Configs loads pipeline documents from SSM by pipeline name, and keeps
// each for a while when asked to.
type Configs struct {
	client     *ssm.Client
	prefix     string
	secretRoot string
	ttl        time.Duration

	mu    sync.Mutex
	cache map[string]cachedConfig
}

type cachedConfig struct {
	cfg *config.Config
	// resolved are the values its references resolved to (secrets).
	resolved []string
	at       time.Time
}

// New reads <prefix><name> through client, its secrets from
// <secretRoot><name>/; empty means DefaultParameterPrefix and
// DefaultSecretRoot. A document read is reused for ttl (0: read it every
// time), so a batch of events costs one SSM read, not one per event.
func New(client *ssm.Client, prefix, secretRoot string, ttl time.Duration) *Configs {
	if prefix == "" {
		prefix = DefaultParameterPrefix
	}
	if secretRoot == "" {
		secretRoot = DefaultSecretRoot
	}
	return &Configs{client: client, prefix: prefix, secretRoot: secretRoot, ttl: ttl, cache: map[string]cachedConfig{}}
}

// FromEnvironment is New for a Lambda: the SDK's default AWS configuration
// and the prefixes from PIPELINE_PARAMETER_PREFIX and PIPELINE_SECRET_ROOT.
func FromEnvironment(ctx context.Context, ttl time.Duration) (*Configs, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	return New(ssm.NewFromConfig(awsCfg), os.Getenv("PIPELINE_PARAMETER_PREFIX"), os.Getenv("PIPELINE_SECRET_ROOT"), ttl), nil
}

// Parameter is the SSM parameter that holds pipeline's document.
func (p *Configs) Parameter(pipeline string) string { return p.prefix + pipeline }

// SecretPrefix is the only place pipeline's references may read from.
func (p *Configs) SecretPrefix(pipeline string) string { return p.secretRoot + pipeline + "/" }

// Get returns the pipeline's configuration, as config.Load reports it: a
// missing document matches config.ErrParameterNotFound; a reference
// outside SecretPrefix or to the environment is a problem in the document.
func (p *Configs) Get(ctx context.Context, pipeline string) (*config.Config, error) {
	cfg, _, err := p.GetWithSecrets(ctx, pipeline)
	return cfg, err
}

// GetWithSecrets is Get, with the values the document's references
// resolved to, for a caller that must not show them; on an error, those
// read before the document was refused, so that its problems can be
// scrubbed too.
func (p *Configs) GetWithSecrets(ctx context.Context, pipeline string) (*config.Config, []string, error) {
	if strings.HasPrefix(p.prefix, p.SecretPrefix(pipeline)) || slices.Contains(config.ReservedNames, pipeline) {
		// Its secrets would be every pipeline's document: refused before
		// any reference is read.
		return nil, nil, &config.Errors{Problems: []config.Problem{{Field: "name",
			Message: fmt.Sprintf("%s is reserved: %s, where its secrets would be, holds every pipeline's document (%s…)", pipeline, p.SecretPrefix(pipeline), p.prefix)}}}
	}
	p.mu.Lock()
	c, ok := p.cache[pipeline]
	p.mu.Unlock()
	if ok && time.Since(c.at) < p.ttl {
		return c.cfg, c.resolved, nil
	}
	var resolved []string
	cfg, err := config.Load(ctx, "ssm:"+p.Parameter(pipeline), config.WithSSMClient(p.client),
		config.WithReferenceScope(p.SecretPrefix(pipeline)), config.WithoutEnvironment(),
		config.WithResolvedValues(func(v string) { resolved = append(resolved, v) }))
	if err != nil {
		return nil, resolved, err
	}
	p.mu.Lock()
	p.cache[pipeline] = cachedConfig{cfg: cfg, resolved: resolved, at: time.Now()}
	p.mu.Unlock()
	return cfg, resolved, nil
}
