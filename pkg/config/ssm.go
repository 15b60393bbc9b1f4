package config

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	"github.com/aws/smithy-go"
)

// SSM Parameter Store holds pipeline documents (--config ssm:/name) and the
// secrets they reference (${ssm:/name}), both read with decryption so
// SecureStrings arrive in clear. Nothing here ever puts a parameter's value
// into an error.

// ErrParameterNotFound matches (errors.Is) a *ParameterError for a
// parameter that does not exist.
var ErrParameterNotFound = errors.New("SSM parameter not found")

// ssmTimeout bounds one GetParameter call, retries included.
const ssmTimeout = 15 * time.Second

// LoadOption changes how Load reads a configuration.
type LoadOption func(*loadOptions)

type loadOptions struct {
	ssm   *ssm.Client
	scope referenceScope              // scope.go
	unset func(field, problem string) // unset.go
	// placeholder is what an accepted unset variable resolves to (unset.go).
	placeholder string
}

// WithSSMClient makes Load read SSM through c, instead of a client made
// from the SDK's standard environment on first need. A Lambda passes the
// client it keeps across invocations.
func WithSSMClient(c *ssm.Client) LoadOption {
	return func(o *loadOptions) { o.ssm = c }
}

// ParameterError is a failure to read one SSM parameter. Its message names
// the parameter and the AWS error, never a value.
type ParameterError struct {
	Name string
	// Code is the AWS error code (ParameterNotFound, AccessDeniedException,
	// …), empty when the call failed before AWS answered.
	Code string
	Err  error
}

func (e *ParameterError) Error() string {
	switch e.Code {
	case "ParameterNotFound":
		return fmt.Sprintf("SSM parameter %s does not exist", e.Name)
	case "":
		return fmt.Sprintf("SSM parameter %s cannot be read: %v", e.Name, e.Err)
	}
	msg := e.Code
	var api smithy.APIError
	if errors.As(e.Err, &api) && api.ErrorMessage() != "" {
		msg += ": " + api.ErrorMessage()
	}
	return fmt.Sprintf("SSM parameter %s cannot be read (%s)", e.Name, msg)
}

// Unwrap returns the SDK's error.
func (e *ParameterError) Unwrap() error { return e.Err }

// Is reports a missing parameter as ErrParameterNotFound.
func (e *ParameterError) Is(target error) bool {
	return target == ErrParameterNotFound && e.Code == "ParameterNotFound"
}

// parameterReader reads parameters for one Load, each name once, making
// the SSM client on first use.
type parameterReader struct {
	mu     sync.Mutex
	client *ssm.Client
	values map[string]string
}

func (r *parameterReader) get(ctx context.Context, name string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if v, ok := r.values[name]; ok {
		return v, nil
	}
	if r.client == nil {
		cfg, err := awsconfig.LoadDefaultConfig(ctx)
		if err != nil {
			return "", &ParameterError{Name: name, Err: fmt.Errorf("AWS configuration: %w", err)}
		}
		r.client = ssm.NewFromConfig(cfg)
	}
	ctx, cancel := context.WithTimeout(ctx, ssmTimeout)
	defer cancel()
	out, err := r.client.GetParameter(ctx, &ssm.GetParameterInput{
		Name:           aws.String(name),
		WithDecryption: aws.Bool(true),
	})
	if err != nil {
		pe := &ParameterError{Name: name, Err: err}
		var api smithy.APIError
		if errors.As(err, &api) {
			pe.Code = api.ErrorCode()
		}
		return "", pe
	}
	if out.Parameter == nil || out.Parameter.Value == nil {
		return "", &ParameterError{Name: name, Err: errors.New("the answer holds no value")}
	}
	if r.values == nil {
		r.values = map[string]string{}
	}
	r.values[name] = *out.Parameter.Value
	return *out.Parameter.Value, nil
}
