package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// Writer is one pipeline's access to the cluster: a role the pipeline's
// task role may assume.
type Writer struct {
	// Pipeline names the role: tributary-writer-<pipeline>.
	Pipeline string
	// TaskRoleARN is the data-plane stack's TaskRoleArn<Pipeline> output.
	TaskRoleARN string
	// TopicPrefix scopes the topic permissions to <prefix>.* (default Pipeline).
	TopicPrefix string
	// ExactlyOnce grants what delivery exactly_once needs (transactions.go).
	ExactlyOnce bool
	// ExternalID is this pipeline's sts:ExternalId: the value of the
	// pipeline's own /tributary/<pipeline>/external-id SecureString, which
	// no other pipeline's document may reference. Empty: the stack's
	// ExternalID (one pipeline only; customerAccessProps checks).
	ExternalID string
}

// CustomerAccessProps configures the stack deployed in the account that
// owns the MSK cluster.
type CustomerAccessProps struct {
	awscdk.StackProps
	Writers []Writer
	// ConnectionTestRoleARN is the data-plane stack's ConnectionTestRoleArn
	// output: the connection test signs in as each writer, as the task does.
	// Optional (the connection test then cannot sign in).
	ConnectionTestRoleARN string
	// ExternalID is the sts:ExternalId of a writer that has none of its own.
	ExternalID string
	// ClusterARN is the MSK cluster: arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>.
	ClusterARN string
	// CreateTopics adds kafka-cluster:CreateTopic (create_missing_topics).
	CreateTopics bool
	// Deployment prefixes the role names (names.go).
	Deployment string
}

// CustomerAccessStack holds the cross-account writer roles, one per pipeline.
type CustomerAccessStack struct {
	awscdk.Stack
	Roles map[string]awsiam.Role
}

// NewCustomerAccessStack builds the stack. It needs no CDK bootstrap in
// the MSK owner's account: it has no assets, so its template is plain
// CloudFormation (`aws cloudformation deploy` takes it as it is). It
// panics on a malformed cluster ARN or prefix, which build checks first.
func NewCustomerAccessStack(scope constructs.Construct, id string, props *CustomerAccessProps) *CustomerAccessStack {
	sp := props.StackProps
	sp.Synthesizer = awscdk.NewBootstraplessSynthesizer(&awscdk.BootstraplessSynthesizerProps{})
	stack := awscdk.NewStack(scope, &id, &sp)
	out := &CustomerAccessStack{Stack: stack, Roles: map[string]awsiam.Role{}}
	for _, w := range props.Writers {
		prefix := w.TopicPrefix
		if prefix == "" {
			prefix = w.Pipeline
		}
		topics, err := topicARN(props.ClusterARN, prefix)
		if err != nil {
			panic(err)
		}
		// Each writer its own external id: a document can supply only its
		// own pipeline's (its references are confined to its secrets), so
		// not even through the connection test's role, which every writer
		// role trusts, can one pipeline's document sign in as another's.
		ext := w.ExternalID
		if ext == "" {
			ext = props.ExternalID
		}
		condition := map[string]any{"StringEquals": map[string]any{"sts:ExternalId": ext}}
		var trusted []awsiam.IPrincipal
		trusted = append(trusted, awsiam.NewArnPrincipal(jsii.String(w.TaskRoleARN)).WithConditions(&condition))
		if props.ConnectionTestRoleARN != "" {
			trusted = append(trusted, awsiam.NewArnPrincipal(jsii.String(props.ConnectionTestRoleARN)).WithConditions(&condition))
		}
		role := awsiam.NewRole(stack, jsii.String(outputKey("Writer", w.Pipeline)), &awsiam.RoleProps{
			RoleName:           jsii.String(writerRoleName(props.Deployment, w.Pipeline)),
			Description:        jsii.String("Tributary pipeline " + w.Pipeline + " writes topics " + prefix + ".* of this MSK cluster"),
			AssumedBy:          awsiam.NewCompositePrincipal(trusted...),
			MaxSessionDuration: awscdk.Duration_Hours(jsii.Number(1)),
		})
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("Cluster"),
			Actions:   jsii.Strings("kafka-cluster:Connect", "kafka-cluster:DescribeCluster", "kafka-cluster:WriteDataIdempotently"),
			Resources: jsii.Strings(props.ClusterARN),
		}))
		// DescribeTopicDynamicConfiguration: the producer reads each
		// topic's max.message.bytes to build batches the topic takes
		// (docs/aws.md says what happens without it).
		topicActions := []string{"kafka-cluster:DescribeTopic", "kafka-cluster:DescribeTopicDynamicConfiguration", "kafka-cluster:WriteData"}
		if props.CreateTopics {
			topicActions = append(topicActions, "kafka-cluster:CreateTopic")
		}
		role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:       jsii.String("TopicsUnderPrefix"),
			Actions:   jsii.Strings(topicActions...),
			Resources: jsii.Strings(topics),
		}))
		if w.ExactlyOnce {
			grantTransactions(role, props.ClusterARN, prefix)
		}
		suppress(role, "AwsSolutions-IAM5", "Topic permissions are scoped to the pipeline's prefix ("+prefix+".*), the narrowest pattern that covers one topic per table.")
		awscdk.NewCfnOutput(stack, jsii.String(outputKey("WriterRoleArn", w.Pipeline)), &awscdk.CfnOutputProps{
			Value: role.RoleArn(), Description: jsii.String("customerRoles entry of pipeline " + w.Pipeline),
		})
		out.Roles[w.Pipeline] = role
	}
	return out
}

// writerRoleName is the writer role of a pipeline in the MSK owner's
// account, predictable so the data plane can be deployed first:
// [<deployment>-]tributary-writer-<pipeline>.
func writerRoleName(deployment, pipeline string) string {
	return resourceName(deployment, "tributary-writer-"+pipeline)
}

// topicARN turns a cluster ARN into the ARN of the topics under prefix:
// arn:aws:kafka:r:a:cluster/name/uuid → arn:aws:kafka:r:a:topic/name/uuid/<prefix>.*
func topicARN(clusterARN, prefix string) (string, error) {
	head, rest, ok := strings.Cut(clusterARN, ":cluster/")
	if !ok || !strings.HasPrefix(head, "arn:") || strings.Count(rest, "/") != 1 || strings.ContainsAny(rest, "*?") {
		return "", fmt.Errorf("cluster ARN %q is not arn:…:kafka:<region>:<account>:cluster/<name>/<uuid>", clusterARN)
	}
	if prefix == "" || strings.ContainsAny(prefix, "*?/") {
		return "", fmt.Errorf("topic prefix %q must be set and hold no '*', '?' or '/'", prefix)
	}
	return head + ":topic/" + rest + "/" + prefix + ".*", nil
}
