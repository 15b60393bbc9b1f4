package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Pipeline is one pipeline the data plane runs as its own Fargate service.
type Pipeline struct {
	// Name is the pipeline's name ([a-z0-9_-]+): its SSM document is
	// <ParameterPrefix><Name>, its checkpoint item is keyed by it.
	Name string
	// CustomerRoleARN is the role in the MSK owner's account that the task
	// assumes (AWS_MSK_IAM); empty when the pipeline does not use one.
	// The connection test signs in with it for this pipeline only.
	CustomerRoleARN string
	// AllowedHosts, when set, are the only brokers and database hosts the
	// connection test connects to for this pipeline: host names, *.suffix
	// patterns, IP addresses or CIDR ranges (context connectionTestHosts).
	AllowedHosts []string
	// PrivateWebhook lets the row-skipped function deliver this pipeline's
	// webhooks to private addresses when its document asks for it
	// (context privateWebhooks): the stack decides, not the document.
	PrivateWebhook bool
	// Glue, when set, is the Glue schema registry of its Avro schemas
	// (context glueRegistries, glue.go).
	Glue *GlueRegistry
}

// DataPlaneProps configures the data-plane stack. Asset paths are props so
// tests can synthesize with a stand-in bootstrap file and Dockerfile.
type DataPlaneProps struct {
	awscdk.StackProps
	Pipelines []Pipeline
	// ImageDir holds the Dockerfile of the task image (the repo root).
	ImageDir string
	// ConnectionTestCode and RowSkippedCode are directories holding each
	// function's `bootstrap` (linux/arm64), as `make build-functions` makes them.
	ConnectionTestCode string
	RowSkippedCode     string
	// BackfillCode holds functions/backfill's `bootstrap`.
	BackfillCode string
	// Network: an existing VPC (needs an account and region) or a new one.
	Network NetworkProps
	// TaskCPU and TaskMemoryMiB size each pipeline's task (default 512 and
	// 1024); the Go runtime's soft memory limit follows the memory.
	TaskCPU       int
	TaskMemoryMiB int
	// KMSKeyARN is a customer-managed key the pipelines' SecureStrings are
	// encrypted with: tasks and functions may decrypt with it through SSM.
	KMSKeyARN string
	// Deployment prefixes the names of shared resources (see names.go).
	Deployment string
	// Image is a prebuilt task image URI; empty builds ImageDir's Dockerfile.
	Image string
	// MSKClusterARN is an MSK cluster in this account that the tasks write
	// with IAM and no customer role: each task role gets the kafka-cluster
	// actions on the cluster and on its pipeline's topics (<name>.*).
	MSKClusterARN string
	// DesiredCount is the tasks each service runs. 0 (the default) lets a
	// first deploy finish before any pipeline document is real: the
	// operator writes the document, then scales the service to 1.
	DesiredCount int
	// AlarmEmail, when set, is subscribed to the alarm topic.
	AlarmEmail string
	// SilentMinutes is how long a pipeline may publish nothing before its
	// "source silent" alarm fires.
	SilentMinutes int
	// ApiThrottleRate (requests per second, steady) and ApiThrottleBurst
	// bound each route of the API, all callers together (the stage's
	// default route throttling); 0 means the defaults.
	ApiThrottleRate  float64
	ApiThrottleBurst int
}

const (
	// metricsNamespace is the CloudWatch namespace of the task's EMF metrics.
	metricsNamespace = "Tributary"
	// defaultTaskCPU and defaultTaskMemoryMiB size a pipeline's task.
	defaultTaskCPU       = 512
	defaultTaskMemoryMiB = 1024
	// defaultSilentMinutes: a pipeline that publishes nothing this long
	// raises its "source silent" alarm.
	defaultSilentMinutes = 30
	// stopTimeoutSeconds is Fargate's maximum: SIGTERM, then this long to
	// flush, checkpoint and release the lease before SIGKILL.
	stopTimeoutSeconds = 120
	// maxReceiveCount is how often a row.skipped message is tried before
	// it moves to the DLQ.
	maxReceiveCount = 5
	// defaultApiThrottleRate and defaultApiThrottleBurst throttle the API's
	// stage (each route, all callers together): a connection test holds
	// a function for up to 28 s and a backfill re-publishes whole tables,
	// neither of which anyone needs many times a second.
	defaultApiThrottleRate  = 5
	defaultApiThrottleBurst = 10
)

var (
	// connectionTestTimeout stays under API Gateway's 30 s integration
	// limit; the function spends what is left of its deadline, not a
	// fixed budget (functions/connection-test).
	connectionTestTimeout = awscdk.Duration_Seconds(jsii.Number(28))
	// rowSkippedTimeout covers one webhook delivery (10 s) with margin.
	rowSkippedTimeout = awscdk.Duration_Minutes(jsii.Number(1))
)

// goMemLimit is the Go runtime's soft memory limit for a task of mem MiB:
// three quarters of it, leaving the rest to the runtime's own overhead,
// the TLS buffers and the kernel's page cache.
func goMemLimit(mem int) string { return fmt.Sprintf("%dMiB", mem*3/4) }

// decryptThroughSSM lets a role decrypt SecureStrings encrypted with a
// customer-managed key, only as SSM does on its behalf.
func decryptThroughSSM(stack awscdk.Stack, keyARN string) awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("kms:Decrypt"),
		Resources: jsii.Strings(keyARN),
		Conditions: &map[string]any{
			"StringEquals": map[string]any{"kms:ViaService": "ssm." + *stack.Region() + ".amazonaws.com"},
		},
	})
}

// DataPlaneStack is what runs pipelines in the operator's account.
type DataPlaneStack struct {
	awscdk.Stack
	// Queues are the row-skipped queues, one per pipeline: only that
	// pipeline's task role may send to its queue, and the function signs
	// an event for the pipeline whose queue it came from.
	Queues    map[string]awssqs.Queue
	DLQ       awssqs.Queue
	Table     awsdynamodb.Table
	Api       awsapigatewayv2.HttpApi
	TaskRoles map[string]awsiam.Role
	// SecurityGroup is what tasks and functions connect from.
	SecurityGroup awsec2.SecurityGroup
	Alarms        awssns.Topic

	deployment string
	mskIAM     bool
	// root is parameterRoot(deployment).
	root    string
	docLogs awslogs.ILogGroup
}

// parameterPrefix is where the pipeline documents live: <prefix><name>.
func (s *DataPlaneStack) parameterPrefix() string { return s.root + "/pipelines/" }

// NewDataPlaneStack builds the stack.
func NewDataPlaneStack(scope constructs.Construct, id string, props *DataPlaneProps) *DataPlaneStack {
	if props.SilentMinutes <= 0 {
		props.SilentMinutes = defaultSilentMinutes
	}
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	s := &DataPlaneStack{Stack: stack, TaskRoles: map[string]awsiam.Role{}, Queues: map[string]awssqs.Queue{},
		deployment: props.Deployment, root: parameterRoot(props.Deployment), mskIAM: props.MSKClusterARN != ""}

	vpc := newVpc(stack, props.Network)
	// One group for the tasks and the connection test (which must reach
	// what the tasks reach): the operator allows it into the MSK and
	// database security groups (docs/aws.md).
	s.SecurityGroup = awsec2.NewSecurityGroup(stack, jsii.String("SecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("Tributary tasks and connection test: allow it into MSK (9098 IAM, 9096 SCRAM, 9094 TLS) and the source database"),
		AllowAllOutbound: jsii.Bool(true),
	})
	awscdk.NewCfnOutput(stack, jsii.String("SecurityGroupId"), &awscdk.CfnOutputProps{
		Value: s.SecurityGroup.SecurityGroupId(), Description: jsii.String("Allow this group into the MSK and database security groups"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("VpcId"), &awscdk.CfnOutputProps{Value: vpc.VpcId()})
	awscdk.NewCfnOutput(stack, jsii.String("VpcCidr"), &awscdk.CfnOutputProps{
		Value: vpc.VpcCidrBlock(), Description: jsii.String("Allow this range on the MSK and database side across peering or a transit gateway"),
	})
	cluster := awsecs.NewCluster(stack, jsii.String("Cluster"), &awsecs.ClusterProps{
		Vpc:                 vpc,
		ContainerInsightsV2: awsecs.ContainerInsights_ENABLED,
	})

	// No fixed name: a retained table (cdk destroy) or one left by a failed
	// create never blocks the next deploy. The starter documents carry the
	// generated name; so does the CheckpointTableName output.
	s.Table = awsdynamodb.NewTable(stack, jsii.String("Checkpoints"), &awsdynamodb.TableProps{
		PartitionKey: &awsdynamodb.Attribute{Name: jsii.String("pipeline"), Type: awsdynamodb.AttributeType_STRING},
		BillingMode:  awsdynamodb.BillingMode_PAY_PER_REQUEST,
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		Encryption:         awsdynamodb.TableEncryption_AWS_MANAGED,
		DeletionProtection: jsii.Bool(true),
		// Kept on replacement and on cdk destroy (the positions of every
		// pipeline), deleted only when the stack's first create rolls back.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
	})
	awscdk.NewCfnOutput(stack, jsii.String("CheckpointTableName"), &awscdk.CfnOutputProps{Value: s.Table.TableName()})

	s.DLQ = awssqs.NewQueue(stack, jsii.String("RowSkippedDLQ"), &awssqs.QueueProps{
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		// Undelivered events outlive the stack (cdk destroy).
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
	})
	suppress(s.DLQ, "AwsSolutions-SQS3", "This is the dead-letter queue of the row-skipped queues; it has none itself.")

	// The row-skipped function posts to URLs the documents name: its own
	// group, which MSK and the database never admit, so a webhook URL on
	// a private address cannot reach them.
	webhookSG := awsec2.NewSecurityGroup(stack, jsii.String("RowSkippedSecurityGroup"), &awsec2.SecurityGroupProps{
		Vpc:              vpc,
		Description:      jsii.String("Tributary row-skipped function: webhooks only; do not allow it into MSK or the database"),
		AllowAllOutbound: jsii.Bool(true),
	})
	awscdk.NewCfnOutput(stack, jsii.String("RowSkippedSecurityGroupId"), &awscdk.CfnOutputProps{
		Value: webhookSG.SecurityGroupId(), Description: jsii.String("The webhook function's group: not to be allowed into MSK or the database"),
	})
	rowSkipped := s.newFunction(stack, "RowSkippedFunction", props.RowSkippedCode, vpc, webhookSG, rowSkippedTimeout)
	// A queue per pipeline, not one for all: a task role may send only to
	// its own pipeline's queue, and the function signs an event only for
	// the pipeline its queue is bound to (ROW_SKIPPED_QUEUES), so no task
	// can have another pipeline's webhooks signed with that pipeline's
	// secret. (SQS's SenderId is not a substitute: an emulator does not
	// give it, and the binding would hang on role IDs, not on IAM grants.)
	var bindings []string
	for _, p := range props.Pipelines {
		q := awssqs.NewQueue(stack, jsii.String("RowSkipped-"+p.Name), &awssqs.QueueProps{
			// Six times the function's timeout, as Lambda's SQS guidance asks.
			VisibilityTimeout: awscdk.Duration_Minutes(jsii.Number(6)),
			RetentionPeriod:   awscdk.Duration_Days(jsii.Number(4)),
			Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
			EnforceSSL:        jsii.Bool(true),
			// A message the function refuses or cannot deliver is tried
			// maxReceiveCount times, then kept in the DLQ (alarmed).
			DeadLetterQueue: &awssqs.DeadLetterQueue{Queue: s.DLQ, MaxReceiveCount: jsii.Number(maxReceiveCount)},
		})
		s.Queues[p.Name] = q
		rowSkipped.AddEventSource(awslambdaeventsources.NewSqsEventSource(q, &awslambdaeventsources.SqsEventSourceProps{
			// One event per invocation: a timeout re-sends only the event that
			// timed out, never webhooks already delivered from the same batch.
			BatchSize:               jsii.Number(1),
			ReportBatchItemFailures: jsii.Bool(true),
		}))
		bindings = append(bindings, p.Name+"="+*q.QueueArn())
		awscdk.NewCfnOutput(stack, jsii.String(outputKey("RowSkippedQueueUrl", p.Name)), &awscdk.CfnOutputProps{
			Value: q.QueueUrl(), Description: jsii.String("webhooks.queue_url of pipeline " + p.Name + " (only its task may send to it)"),
		})
	}
	// functions/row-skipped/queues.go reads it.
	rowSkipped.AddEnvironment(jsii.String("ROW_SKIPPED_QUEUES"), jsii.String(strings.Join(bindings, ",")), nil)
	var private []string
	for _, p := range props.Pipelines {
		if p.PrivateWebhook {
			private = append(private, p.Name)
		}
	}
	if len(private) > 0 {
		rowSkipped.AddEnvironment(jsii.String("PRIVATE_WEBHOOK_PIPELINES"), jsii.String(strings.Join(private, ",")), nil)
	}
	connTest := s.newFunction(stack, "ConnectionTestFunction", props.ConnectionTestCode, vpc, s.SecurityGroup, connectionTestTimeout)
	// The connection test may assume every pipeline's writer role, so the
	// stack, not the document, says which one each pipeline signs in
	// with (functions/connection-test/targets.go reads both; without
	// PIPELINE_WRITER_ROLES no pipeline's test assumes a role).
	writers, hosts := connectionTestBindings(props.Pipelines)
	if writers != "" {
		connTest.AddEnvironment(jsii.String("PIPELINE_WRITER_ROLES"), jsii.String(writers), nil)
	}
	if hosts != "" {
		connTest.AddEnvironment(jsii.String("PIPELINE_ALLOWED_HOSTS"), jsii.String(hosts), nil)
	}
	for _, fn := range []awslambda.Function{rowSkipped, connTest} {
		// Each deployed pipeline by name: a document written for a
		// pipeline this stack does not run is not readable.
		for _, p := range props.Pipelines {
			fn.AddToRolePolicy(s.readPipelineParameters(stack, p.Name))
		}
		if props.KMSKeyARN != "" {
			fn.AddToRolePolicy(decryptThroughSSM(stack, props.KMSKeyARN))
		}
		// After the grant: a suppression covers only the children that exist.
		suppress(fn.Role(), "AwsSolutions-IAM5",
			"Reads the deployed pipelines' documents and their secrets under "+s.root+"/<pipeline>/*, pipeline by pipeline.")
	}

	rate, burst := props.ApiThrottleRate, props.ApiThrottleBurst
	if rate <= 0 {
		rate = defaultApiThrottleRate
	}
	if burst <= 0 {
		burst = defaultApiThrottleBurst
	}
	s.Api = newConnectionTestApi(stack, connTest, rate, burst)
	s.addBackfillRoute(stack, props.BackfillCode, props.Pipelines)

	logs := awslogs.NewLogGroup(stack, jsii.String("TaskLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
	})
	image := s.taskImage(stack, props)
	for _, p := range props.Pipelines {
		role := s.newPipelineService(stack, cluster, logs, image, props, p)
		s.TaskRoles[p.Name] = role
		if props.KMSKeyARN != "" {
			role.AddToPolicy(decryptThroughSSM(stack, props.KMSKeyARN))
		}
		if p.CustomerRoleARN != "" {
			// The connection test signs in to MSK the way the task does.
			connTest.AddToRolePolicy(assumeCustomerRole(p.CustomerRoleARN))
		}
		if p.Glue != nil {
			grantGlueCheck(stack, connTest, p)
		}
		if props.MSKClusterARN != "" {
			grantMSK(role, props.MSKClusterARN, p.Name, true)
			grantMSK(connTest.Role(), props.MSKClusterARN, p.Name, false)
		}
	}
	suppressDocumentFunction(stack)
	s.alarmsAndDashboard(stack, props)
	// The MSK owner's writer roles trust this role and the task roles
	// (TributaryCustomerAccess), with the external id.
	awscdk.NewCfnOutput(stack, jsii.String("ConnectionTestRoleArn"), &awscdk.CfnOutputProps{Value: connTest.Role().RoleArn()})
	// Callers' IAM policies name routes per pipeline:
	// arn:aws:execute-api:<region>:<account>:<ApiId>/*/POST/pipelines/<name>/… (docs/aws.md).
	awscdk.NewCfnOutput(stack, jsii.String("ApiId"), &awscdk.CfnOutputProps{
		Value: s.Api.ApiId(), Description: jsii.String("For execute-api:Invoke grants per pipeline: arn:aws:execute-api:<region>:<account>:<ApiId>/*/POST/pipelines/<name>/backfill"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("ConnectionTestUrl"), &awscdk.CfnOutputProps{
		Value: jsii.String(fmt.Sprintf("%spipelines/{name}/connection-test", *s.Api.Url())),
	})
	awscdk.NewCfnOutput(stack, jsii.String("ClusterName"), &awscdk.CfnOutputProps{Value: cluster.ClusterName()})
	return s
}

// newFunction is a Go function on provided.al2023, arm64, in the VPC's
// private subnets (brokers are usually private; webhooks go out by NAT).
func (s *DataPlaneStack) newFunction(stack awscdk.Stack, id, codeDir string, vpc awsec2.IVpc, sg awsec2.ISecurityGroup, timeout awscdk.Duration) awslambda.Function {
	fn := awslambda.NewFunction(stack, jsii.String(id), &awslambda.FunctionProps{
		Runtime:        awslambda.Runtime_PROVIDED_AL2023(),
		Architecture:   awslambda.Architecture_ARM_64(),
		Handler:        jsii.String("bootstrap"),
		Code:           awslambda.Code_FromAsset(jsii.String(codeDir), nil),
		MemorySize:     jsii.Number(256),
		Timeout:        timeout,
		Vpc:            vpc,
		SecurityGroups: &[]awsec2.ISecurityGroup{sg},
		VpcSubnets:     &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
		Environment: &map[string]*string{
			"PIPELINE_PARAMETER_PREFIX": jsii.String(s.parameterPrefix()),
			// References in pipeline <name>'s document may name only
			// parameters under <root>/<name>/ (functions/internal/pipelines).
			"PIPELINE_SECRET_ROOT": jsii.String(s.root + "/"),
		},
		LogGroup: awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
		}),
	})
	suppress(fn.Role(), "AwsSolutions-IAM4",
		"AWSLambdaBasicExecutionRole and AWSLambdaVPCAccessExecutionRole only allow writing the function's logs and managing its ENIs.")
	// W3005: the CDK lists the service role in DependsOn next to the
	// GetAtt of its ARN (with the role's default policy, which the GetAtt
	// does not cover). Redundant, harmless, and not ours to remove.
	lintIgnore(fn, "W3005")
	return fn
}

// readPipelineParameters allows reading the document and secrets of one
// pipeline: its document <prefix><name> and <root>/<name>/*.
func (s *DataPlaneStack) readPipelineParameters(stack awscdk.Stack, name string) awsiam.PolicyStatement {
	arn := func(path string) *string {
		return awscdk.Arn_Format(&awscdk.ArnComponents{
			Service: jsii.String("ssm"), Resource: jsii.String("parameter"), ResourceName: jsii.String(path),
		}, stack)
	}
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("ssm:GetParameter", "ssm:GetParameters"),
		Resources: &[]*string{arn(strings.TrimPrefix(s.parameterPrefix(), "/") + name), arn(strings.TrimPrefix(s.root, "/") + "/" + name + "/*")},
	})
}

// connectionTestBindings are the connection test's PIPELINE_WRITER_ROLES
// (<pipeline>=<writer role ARN>,…: the only role each pipeline's test
// signs in with; a pipeline not listed signs in with none) and
// PIPELINE_ALLOWED_HOSTS ({"<pipeline>":["<host pattern or CIDR>",…]},
// empty when no pipeline is restricted).
func connectionTestBindings(pipelines []Pipeline) (writers, hosts string) {
	var w []string
	h := map[string][]string{}
	for _, p := range pipelines {
		if p.CustomerRoleARN != "" {
			w = append(w, p.Name+"="+p.CustomerRoleARN)
		}
		if len(p.AllowedHosts) > 0 {
			h[p.Name] = p.AllowedHosts
		}
	}
	if len(h) > 0 {
		b, _ := json.Marshal(h)
		hosts = string(b)
	}
	return strings.Join(w, ","), hosts
}

func assumeCustomerRole(roleARN string) awsiam.PolicyStatement {
	return awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sts:AssumeRole"),
		Resources: jsii.Strings(roleARN),
	})
}

// newConnectionTestApi is the HTTP API: one route, IAM authorization,
// access logs, and each route of the stage throttled to rate requests per
// second with bursts of burst (API Gateway's account limits are far higher).
func newConnectionTestApi(stack awscdk.Stack, fn awslambda.Function, rate float64, burst int) awsapigatewayv2.HttpApi {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("Api"), &awsapigatewayv2.HttpApiProps{
		Description:       jsii.String("Tributary: POST /pipelines/{name}/connection-test and /backfill (SigV4)"),
		DefaultAuthorizer: awsapigatewayv2authorizers.NewHttpIamAuthorizer(),
	})
	api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
		Path:        jsii.String("/pipelines/{name}/connection-test"),
		Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST},
		Integration: awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("ConnectionTest"), fn, nil),
	})
	accessLogs := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN_ON_UPDATE_OR_DELETE,
	})
	stage := api.DefaultStage().Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(),
		Format: jsii.String(`{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","caller":"$context.identity.caller",` +
			`"user":"$context.identity.userArn","time":"$context.requestTime","route":"$context.routeKey","status":"$context.status"}`),
	})
	stage.SetDefaultRouteSettings(&awsapigatewayv2.CfnStage_RouteSettingsProperty{
		ThrottlingRateLimit:  jsii.Number(rate),
		ThrottlingBurstLimit: jsii.Number(float64(burst)),
	})
	return api
}

// newPipelineService runs one pipeline: a Fargate service with exactly one
// task (the checkpoint lease allows one owner), stopped gracefully.
func (s *DataPlaneStack) newPipelineService(stack awscdk.Stack, cluster awsecs.Cluster, logs awslogs.LogGroup, image awsecs.ContainerImage, props *DataPlaneProps, p Pipeline) awsiam.Role {
	id := "Pipeline-" + p.Name
	// No fixed name (IAM names are account-wide: a second region or a
	// redeploy would collide). The MSK owner trusts the TaskRoleArn<Pipeline>
	// output once this stack exists (docs/aws.md, step 7).
	role := awsiam.NewRole(stack, jsii.String(id+"-TaskRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("ecs-tasks.amazonaws.com"), nil),
	})
	awscdk.NewCfnOutput(stack, jsii.String(outputKey("TaskRoleArn", p.Name)), &awscdk.CfnOutputProps{
		Value: role.RoleArn(), Description: jsii.String("Task role of pipeline " + p.Name),
	})
	cpu, mem := props.TaskCPU, props.TaskMemoryMiB
	if cpu == 0 {
		cpu = defaultTaskCPU
	}
	if mem == 0 {
		mem = defaultTaskMemoryMiB
	}
	role.AddToPolicy(s.readPipelineParameters(stack, p.Name))
	// Its item, and the chunks of a checkpoint too large for it
	// (<name>#checkpoint#…, pkg/checkpoint/chunks.go), which one
	// transaction writes with the item. Pipeline names hold no '#', so no
	// other pipeline's key matches.
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:DescribeTable"),
		Resources: &[]*string{s.Table.TableArn()},
		Conditions: &map[string]any{
			"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []string{p.Name, p.Name + "#checkpoint#*"}},
		},
	}))
	// Its own queue only (see NewDataPlaneStack).
	s.Queues[p.Name].GrantSendMessages(role)
	if p.CustomerRoleARN != "" {
		role.AddToPolicy(assumeCustomerRole(p.CustomerRoleARN))
	}
	if p.Glue != nil {
		grantGlue(stack, role, p)
	}
	suppress(role, "AwsSolutions-IAM5",
		"SSM access is limited to this pipeline's document and its secrets under "+s.root+"/"+p.Name+"/*; MSK topic access (if any) to its prefix "+p.Name+".*; Glue access (if any) to the schemas of its own registry.")

	task := awsecs.NewFargateTaskDefinition(stack, jsii.String(id+"-Task"), &awsecs.FargateTaskDefinitionProps{
		Cpu:            jsii.Number(float64(cpu)),
		MemoryLimitMiB: jsii.Number(float64(mem)),
		TaskRole:       role,
		RuntimePlatform: &awsecs.RuntimePlatform{
			CpuArchitecture:       awsecs.CpuArchitecture_ARM64(),
			OperatingSystemFamily: awsecs.OperatingSystemFamily_LINUX(),
		},
	})
	task.AddContainer(jsii.String("tributary"), &awsecs.ContainerDefinitionOptions{
		Image:       image,
		Command:     jsii.Strings("run", "--config", "ssm:"+s.parameterPrefix()+p.Name),
		StopTimeout: awscdk.Duration_Seconds(jsii.Number(stopTimeoutSeconds)),
		Logging: awsecs.LogDrivers_AwsLogs(&awsecs.AwsLogDriverProps{
			LogGroup:     logs,
			StreamPrefix: jsii.String(p.Name),
		}),
		Environment: &map[string]*string{
			"TRIBUTARY_METRICS": jsii.String("emf"),
			// The app's built-in soft limit (100 MiB) suits a small host; in
			// a task the limit follows the task's memory.
			"GOMEMLIMIT": jsii.String(goMemLimit(mem)),
		},
	})
	suppress(task, "AwsSolutions-ECS2", "The environment holds the metrics format and the Go memory limit; secrets come from SSM at start-up.")
	suppress(task, "AwsSolutions-IAM5", "The execution role's ECR and logs grants are the CDK's defaults for an image asset.")

	service := awsecs.NewFargateService(stack, jsii.String(id+"-Service"), &awsecs.FargateServiceProps{
		Cluster:        cluster,
		TaskDefinition: task,
		// 0 on a first deploy: the starter document is not runnable, and a
		// task that fails would make the circuit breaker roll back the
		// stack. docs/aws.md: write the document, then scale to 1.
		DesiredCount: jsii.Number(float64(props.DesiredCount)),
		// Stop the old task before starting a new one: one owner per pipeline.
		MinHealthyPercent: jsii.Number(0),
		MaxHealthyPercent: jsii.Number(100),
		CircuitBreaker:    &awsecs.DeploymentCircuitBreaker{Enable: jsii.Bool(true), Rollback: jsii.Bool(true)},
		VpcSubnets:        &awsec2.SubnetSelection{SubnetType: awsec2.SubnetType_PRIVATE_WITH_EGRESS},
		SecurityGroups:    &[]awsec2.ISecurityGroup{s.SecurityGroup},
	})
	// For `aws ecs update-service --desired-count 1` (docs/aws.md).
	awscdk.NewCfnOutput(stack, jsii.String(outputKey("Service", p.Name)), &awscdk.CfnOutputProps{
		Value: service.ServiceName(), Description: jsii.String("ECS service of pipeline " + p.Name),
	})

	s.createOnlyDocument(stack, p, s.parameterPrefix()+p.Name,
		starterDocument(p, s.root, *s.Table.TableName(), *s.Queues[p.Name].QueueUrl(), s.mskIAM))
	return role
}
