package main

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// CustomerAccessProps configures the stack deployed in the account that
// owns the MSK cluster.
type CustomerAccessProps struct {
	awscdk.StackProps
	// TaskRoleARN is the data-plane task role allowed to assume the role
	// (arn:aws:iam::<data-plane account>:role/tributary-task-<pipeline>).
	TaskRoleARN string
	// ExternalID must be presented on AssumeRole (sts:ExternalId).
	ExternalID string
	// ClusterARN is the MSK cluster: arn:aws:kafka:<region>:<account>:cluster/<name>/<uuid>.
	ClusterARN string
	// TopicPrefix scopes the topic permissions to <prefix>.*.
	TopicPrefix string
	// CreateTopics adds kafka-cluster:CreateTopic (create_missing_topics).
	CreateTopics bool
	// RoleName defaults to tributary-writer.
	RoleName string
}

// CustomerAccessStack holds the cross-account writer role.
type CustomerAccessStack struct {
	awscdk.Stack
	Role awsiam.Role
}

// NewCustomerAccessStack builds the stack. It panics on a malformed cluster
// ARN, since the topic ARNs are derived from it.
func NewCustomerAccessStack(scope constructs.Construct, id string, props *CustomerAccessProps) *CustomerAccessStack {
	stack := awscdk.NewStack(scope, &id, &props.StackProps)
	topics, err := topicARN(props.ClusterARN, props.TopicPrefix)
	if err != nil {
		panic(err)
	}
	name := props.RoleName
	if name == "" {
		name = "tributary-writer"
	}
	role := awsiam.NewRole(stack, jsii.String("WriterRole"), &awsiam.RoleProps{
		RoleName:    jsii.String(name),
		Description: jsii.String("Tributary writes topics " + props.TopicPrefix + ".* of this MSK cluster"),
		AssumedBy: awsiam.NewArnPrincipal(jsii.String(props.TaskRoleARN)).WithConditions(&map[string]any{
			"StringEquals": map[string]any{"sts:ExternalId": props.ExternalID},
		}),
		MaxSessionDuration: awscdk.Duration_Hours(jsii.Number(1)),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("Cluster"),
		Actions:   jsii.Strings("kafka-cluster:Connect", "kafka-cluster:WriteDataIdempotently"),
		Resources: jsii.Strings(props.ClusterARN),
	}))
	topicActions := []string{"kafka-cluster:DescribeTopic", "kafka-cluster:WriteData"}
	if props.CreateTopics {
		topicActions = append(topicActions, "kafka-cluster:CreateTopic")
	}
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("TopicsUnderPrefix"),
		Actions:   jsii.Strings(topicActions...),
		Resources: jsii.Strings(topics),
	}))
	suppress(role, "AwsSolutions-IAM5", "Topic permissions are scoped to the pipeline's prefix ("+props.TopicPrefix+".*), the narrowest pattern that covers one topic per table.")
	awscdk.NewCfnOutput(stack, jsii.String("WriterRoleArn"), &awscdk.CfnOutputProps{Value: role.RoleArn()})
	return &CustomerAccessStack{Stack: stack, Role: role}
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
