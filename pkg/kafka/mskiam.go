package kafka

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-msk-iam-sasl-signer-go/signer"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// assumeRoleTiming is how long assumed-role credentials live and how long
// before they expire the cache replaces them, so that a token is never
// signed with credentials about to lapse. In production the session is the
// SDK's default of 15 minutes (the shortest STS allows) renewed 5 minutes
// early. Tests shorten both to seconds (the AWS emulator honours any
// DurationSeconds) to prove that a producer outlives several sets of
// credentials; nothing else changes them.
var assumeRoleTiming = struct {
	duration     time.Duration // 0: stscreds.DefaultDuration
	expiryWindow time.Duration
}{expiryWindow: 5 * time.Minute}

// mskIAMMechanism signs in to MSK with IAM: an OAUTHBEARER token that is a
// SigV4-presigned kafka-cluster:Connect URL (aws-msk-iam-sasl-signer-go).
// With aws_role_arn the credentials come from STS AssumeRole (with
// external_id when set) through a cache that renews them before they
// expire; otherwise from the SDK's default chain. A token is made for every
// sign-in, and franz-go signs in again before the broker's session
// lifetime ends, so a task outlives any one set of credentials.
//
// AWS clients honour the SDK's environment (AWS_REGION, AWS_ENDPOINT_URL,
// ...), which is how tests point STS at an emulator.
func mskIAMMechanism(d Options) (sasl.Mechanism, error) {
	creds, region, err := mskIAMCredentials(context.Background(), d)
	if err != nil {
		return nil, err
	}
	return oauth.Oauth(func(ctx context.Context) (oauth.Auth, error) {
		token, _, err := signer.GenerateAuthTokenFromCredentialsProvider(ctx, region, creds)
		if err != nil {
			return oauth.Auth{}, fmt.Errorf("AWS_MSK_IAM sign-in token: %w", err)
		}
		return oauth.Auth{Token: token}, nil
	}), nil
}

// mskIAMCredentials returns the credentials provider and region for d.
func mskIAMCredentials(ctx context.Context, d Options) (aws.CredentialsProvider, string, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if d.AWSRegion != "" {
		opts = append(opts, awsconfig.WithRegion(d.AWSRegion))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", fmt.Errorf("destination.authentication AWS_MSK_IAM: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, "", errors.New("destination.aws_region: required with authentication AWS_MSK_IAM (or set AWS_REGION in the environment)")
	}
	creds := cfg.Credentials
	if d.AWSRoleARN != "" {
		ext, timing := d.ExternalID, assumeRoleTiming
		provider := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), d.AWSRoleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = "tributary"
			if ext != "" {
				o.ExternalID = aws.String(ext)
			}
			if timing.duration > 0 {
				o.Duration = timing.duration
			}
		})
		creds = aws.NewCredentialsCache(provider, func(o *aws.CredentialsCacheOptions) {
			o.ExpiryWindow = timing.expiryWindow
		})
	}
	if creds == nil {
		return nil, "", errors.New("destination.authentication AWS_MSK_IAM: no AWS credentials found (set aws_role_arn or provide credentials to the task)")
	}
	return creds, cfg.Region, nil
}
