package avro

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/google/uuid"
)

// Glue is the AWS Glue Schema Registry, with records in the wire format
// of AWS's serializers: header version byte 3, compression byte 0 (none),
// the schema version's UUID in 16 bytes, then the Avro binary. A subject
// is a schema of the registry (<topic>-key, <topic>-value), created with
// the compatibility mode Compatibility when missing.
type Glue struct {
	client        *glue.Client
	registry      string
	compatibility gluetypes.Compatibility
	calls         Calls
	// PollEvery is how often a pending schema version is checked;
	// default 1 s.
	PollEvery time.Duration
}

// GlueOptions configure a Glue client.
type GlueOptions struct {
	RegistryName string
	Region       string // default: the SDK's (AWS_REGION)
	RoleARN      string // assumed through STS when set
	ExternalID   string
	// Compatibility of the schemas this client creates; default BACKWARD.
	Compatibility string
	// Dial, when set, makes every connection to Glue and STS (the
	// connection-test function's guarded dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Calls, when set, is told of every request to the registry.
	Calls Calls
}

// NewGlue returns a client of the Glue registry o.RegistryName. AWS
// clients honour the SDK's environment (AWS_REGION, AWS_ENDPOINT_URL, …).
func NewGlue(ctx context.Context, o GlueOptions) (*Glue, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if o.Region != "" {
		opts = append(opts, awsconfig.WithRegion(o.Region))
	}
	if o.Dial != nil {
		dial := o.Dial
		opts = append(opts, awsconfig.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
			tr.DialContext, tr.Proxy = dial, nil
		})))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("format.schema_registry: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, errors.New("format.schema_registry.region: required with type glue (or set AWS_REGION in the environment)")
	}
	if o.RoleARN != "" {
		ext := o.ExternalID
		provider := stscreds.NewAssumeRoleProvider(sts.NewFromConfig(cfg), o.RoleARN, func(ao *stscreds.AssumeRoleOptions) {
			ao.RoleSessionName = "tributary"
			if ext != "" {
				ao.ExternalID = aws.String(ext)
			}
		})
		cfg.Credentials = aws.NewCredentialsCache(provider)
	}
	compat := gluetypes.Compatibility(o.Compatibility)
	if compat == "" {
		compat = gluetypes.CompatibilityBackward
	}
	return &Glue{client: glue.NewFromConfig(cfg), registry: o.RegistryName, compatibility: compat, calls: o.Calls}, nil
}

// Kind implements Registry.
func (g *Glue) Kind() string { return "glue" }

// Register implements Registry: the version of the schema with this
// definition if there is one, else a new version (or a new schema).
func (g *Glue) Register(ctx context.Context, subject, schema string) ([]byte, error) {
	id := &gluetypes.SchemaId{RegistryName: aws.String(g.registry), SchemaName: aws.String(subject)}
	got, err := g.client.GetSchemaByDefinition(ctx, &glue.GetSchemaByDefinitionInput{SchemaId: id, SchemaDefinition: aws.String(schema)})
	g.calls.count(CallLookup, answered(err))
	if err == nil && got.Status == gluetypes.SchemaVersionStatusAvailable {
		return g.header(aws.ToString(got.SchemaVersionId))
	}
	var notFound *gluetypes.EntityNotFoundException
	if err != nil && !errors.As(err, &notFound) {
		return nil, fmt.Errorf("glue schema registry %s: GetSchemaByDefinition %s: %w", g.registry, subject, err)
	}
	var versionID string
	var status gluetypes.SchemaVersionStatus
	reg, err := g.client.RegisterSchemaVersion(ctx, &glue.RegisterSchemaVersionInput{SchemaId: id, SchemaDefinition: aws.String(schema)})
	g.calls.count(CallRegister, answered(err))
	switch {
	case err == nil:
		versionID, status = aws.ToString(reg.SchemaVersionId), reg.Status
	case errors.As(err, &notFound):
		created, cerr := g.client.CreateSchema(ctx, &glue.CreateSchemaInput{
			RegistryId:       &gluetypes.RegistryId{RegistryName: aws.String(g.registry)},
			SchemaName:       aws.String(subject),
			DataFormat:       gluetypes.DataFormatAvro,
			Compatibility:    g.compatibility,
			SchemaDefinition: aws.String(schema),
		})
		g.calls.count(CallRegister, cerr)
		if cerr != nil {
			return nil, fmt.Errorf("glue schema registry %s: CreateSchema %s: %w", g.registry, subject, cerr)
		}
		versionID, status = aws.ToString(created.SchemaVersionId), created.SchemaVersionStatus
	default:
		var invalid *gluetypes.InvalidInputException
		if errors.As(err, &invalid) {
			return nil, &RefusedError{Subject: subject, Reason: aws.ToString(invalid.Message)}
		}
		return nil, fmt.Errorf("glue schema registry %s: RegisterSchemaVersion %s: %w", g.registry, subject, err)
	}
	poll := g.PollEvery
	if poll <= 0 {
		poll = time.Second
	}
	for status == gluetypes.SchemaVersionStatusPending {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
		v, err := g.client.GetSchemaVersion(ctx, &glue.GetSchemaVersionInput{SchemaVersionId: aws.String(versionID)})
		g.calls.count(CallFetch, err)
		if err != nil {
			return nil, fmt.Errorf("glue schema registry %s: GetSchemaVersion %s: %w", g.registry, subject, err)
		}
		status = v.Status
	}
	if status != gluetypes.SchemaVersionStatusAvailable {
		return nil, &RefusedError{Subject: subject, Reason: fmt.Sprintf("schema version %s is %s (Glue fails a version that breaks the schema's compatibility mode, %s by default)", versionID, status, g.compatibility)}
	}
	return g.header(versionID)
}

// answered is err unless it is Glue's answer that the schema does not
// exist yet, which is a registry's reply like any other, not a failure.
func answered(err error) error {
	var notFound *gluetypes.EntityNotFoundException
	if errors.As(err, &notFound) {
		return nil
	}
	return err
}

func (g *Glue) header(versionID string) ([]byte, error) {
	u, err := uuid.Parse(versionID)
	if err != nil {
		return nil, fmt.Errorf("glue schema registry returned schema version id %q, not a UUID", versionID)
	}
	return GlueHeader(u), nil
}

// SchemaByVersion returns the definition of a schema version, as a
// consumer reads it.
func (g *Glue) SchemaByVersion(ctx context.Context, versionID uuid.UUID) (string, error) {
	v, err := g.client.GetSchemaVersion(ctx, &glue.GetSchemaVersionInput{SchemaVersionId: aws.String(versionID.String())})
	g.calls.count(CallFetch, err)
	if err != nil {
		return "", err
	}
	return aws.ToString(v.SchemaDefinition), nil
}

// GlueHeader is the 18 bytes before a record of schema version id.
func GlueHeader(id uuid.UUID) []byte {
	return append([]byte{3, 0}, id[:]...)
}

// ParseGlue splits a Glue-framed record into schema version and Avro
// binary.
func ParseGlue(rec []byte) (uuid.UUID, []byte, error) {
	if len(rec) < 18 || rec[0] != 3 {
		return uuid.UUID{}, nil, errors.New("not a Glue wire-format record (header version 3)")
	}
	if rec[1] != 0 {
		return uuid.UUID{}, nil, fmt.Errorf("Glue record compressed (compression byte %d)", rec[1])
	}
	var id uuid.UUID
	copy(id[:], rec[2:18])
	return id, rec[18:], nil
}
