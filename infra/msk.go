package main

import (
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecr"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecrassets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsecs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// grantMSK lets role use an MSK cluster in this account with IAM
// authentication and no customer role: connect to the cluster and, on the
// pipeline's topics only (<pipeline>.*, its topic_prefix), describe them
// and (write) read their max.message.bytes (DescribeTopicDynamicConfiguration:
// without it a topic whose limit is below max_message_bytes stalls the
// pipeline, docs/aws.md), produce idempotently and create missing ones. The connection
// test (write false) only connects and describes. The cross-account path
// (customerRoleArn, TributaryCustomerAccess) grants the same actions in the
// MSK owner's account instead.
func grantMSK(role awsiam.IRole, clusterARN, pipeline string, write bool) {
	topics, err := topicARN(clusterARN, pipeline)
	if err != nil {
		panic(err) // build checked the ARN; pipeline names hold no '*', '?' or '/'
	}
	cluster := []string{"kafka-cluster:Connect", "kafka-cluster:DescribeCluster"}
	topic := []string{"kafka-cluster:DescribeTopic"}
	if write {
		cluster = append(cluster, "kafka-cluster:WriteDataIdempotently")
		topic = append(topic, "kafka-cluster:DescribeTopicDynamicConfiguration", "kafka-cluster:WriteData", "kafka-cluster:CreateTopic")
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings(cluster...), Resources: jsii.Strings(clusterARN),
	}))
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings(topic...), Resources: jsii.Strings(topics),
	}))
}

// taskImage is the prebuilt image props.Image names, or the repository's
// Dockerfile built as an asset (arm64).
func (s *DataPlaneStack) taskImage(stack awscdk.Stack, props *DataPlaneProps) awsecs.ContainerImage {
	if props.Image != "" {
		if repo, tag, ok := ecrImage(props.Image); ok {
			// Private ECR: the execution role is granted the pull.
			r := awsecr.Repository_FromRepositoryArn(stack, jsii.String("Image"), jsii.String(repo))
			return awsecs.ContainerImage_FromEcrRepository(r, jsii.String(tag))
		}
		return awsecs.ContainerImage_FromRegistry(jsii.String(props.Image), nil)
	}
	return awsecs.ContainerImage_FromAsset(jsii.String(props.ImageDir), &awsecs.AssetImageProps{
		Platform: awsecrassets.Platform_LINUX_ARM64(),
	})
}

// ecrImage splits <account>.dkr.ecr.<region>.amazonaws.com/<repo>[:tag|@digest]
// into the repository ARN and the tag or digest ("latest" when neither).
func ecrImage(uri string) (repoARN, tagOrDigest string, ok bool) {
	host, path, found := strings.Cut(uri, "/")
	parts := strings.Split(host, ".")
	if !found || len(parts) < 6 || parts[1] != "dkr" || parts[2] != "ecr" {
		return "", "", false
	}
	account, region := parts[0], parts[3]
	name, tag := path, "latest"
	if n, d, has := strings.Cut(path, "@"); has {
		name, tag = n, d
	} else if i := strings.LastIndexByte(path, ':'); i > 0 {
		name, tag = path[:i], path[i+1:]
	}
	partition := "aws"
	if strings.HasPrefix(region, "cn-") {
		partition = "aws-cn"
	}
	return "arn:" + partition + ":ecr:" + region + ":" + account + ":repository/" + name, tag, true
}
