// Package pipelines loads pipeline documents for the Lambda functions from
// SSM Parameter Store, by pipeline name: <prefix><name>.
package pipelines

import (
	"context"
	"os"
	"sync"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/tributary-cdc/tributary/pkg/config"
)

// DefaultParameterPrefix is where pipeline documents live in SSM.
const DefaultParameterPrefix = "/tributary/pipelines/"

// Configs loads pipeline documents from SSM by pipeline name, and keeps
// each for a while when asked to.
type Configs struct {
	client *ssm.Client
	prefix string
	ttl    time.Duration

	mu    sync.Mutex
	cache map[string]cachedConfig
}

type cachedConfig struct {
	cfg *config.Config
	at  time.Time
}

// New reads <prefix><name> through client; an empty prefix means
// DefaultParameterPrefix. A document read is reused for ttl (0: read it
// every time), so a batch of events costs one SSM read, not one per event.
func New(client *ssm.Client, prefix string, ttl time.Duration) *Configs {
	if prefix == "" {
		prefix = DefaultParameterPrefix
	}
	return &Configs{client: client, prefix: prefix, ttl: ttl, cache: map[string]cachedConfig{}}
}

// FromEnvironment is New for a Lambda: the SDK's default AWS configuration
// and the prefix from PIPELINE_PARAMETER_PREFIX.
func FromEnvironment(ctx context.Context, ttl time.Duration) (*Configs, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	return New(ssm.NewFromConfig(awsCfg), os.Getenv("PIPELINE_PARAMETER_PREFIX"), ttl), nil
}

// Parameter is the SSM parameter that holds pipeline's document.
func (p *Configs) Parameter(pipeline string) string { return p.prefix + pipeline }

// Get returns the pipeline's configuration, as config.Load reports it: a
// missing document matches config.ErrParameterNotFound.
func (p *Configs) Get(ctx context.Context, pipeline string) (*config.Config, error) {
	p.mu.Lock()
	c, ok := p.cache[pipeline]
	p.mu.Unlock()
	if ok && time.Since(c.at) < p.ttl {
		return c.cfg, nil
	}
	cfg, err := config.Load(ctx, "ssm:"+p.Parameter(pipeline), config.WithSSMClient(p.client))
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.cache[pipeline] = cachedConfig{cfg: cfg, at: time.Now()}
	p.mu.Unlock()
	return cfg, nil
}
