package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"
)

// Delivery exactly_once publishes in Kafka transactions under
// the transactional id <prefix>.tributary-<pipeline> and reads back its
// committed position from <prefix>.tributary-offsets. A writer role of
// such a pipeline also gets, and only then:
//   - kafka-cluster:DescribeTransactionalId and AlterTransactionalId on
//     transactional-id/<cluster>/<uuid>/<prefix>.* (the same prefix as its
//     topics), and
//   - kafka-cluster:ReadData on its offsets topic (nothing else is read).

// transactionalIDARN turns a cluster ARN into the ARN of the
// transactional ids under prefix, as topicARN does for topics.
func transactionalIDARN(clusterARN, prefix string) (string, error) {
	topics, err := topicARN(clusterARN, prefix)
	if err != nil {
		return "", err
	}
	return strings.Replace(topics, ":topic/", ":transactional-id/", 1), nil
}

// offsetsTopicARN is the ARN of the pipeline's offsets topic.
func offsetsTopicARN(clusterARN, prefix string) (string, error) {
	topics, err := topicARN(clusterARN, prefix)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(topics, "*") + "tributary-offsets", nil
}

// grantTransactions adds the exactly-once statements to a writer role.
func grantTransactions(role awsiam.Role, clusterARN, prefix string) {
	ids, err := transactionalIDARN(clusterARN, prefix)
	if err != nil {
		panic(err)
	}
	offsets, err := offsetsTopicARN(clusterARN, prefix)
	if err != nil {
		panic(err)
	}
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("TransactionalIdsUnderPrefix"),
		Actions:   jsii.Strings("kafka-cluster:DescribeTransactionalId", "kafka-cluster:AlterTransactionalId"),
		Resources: jsii.Strings(ids),
	}))
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:       jsii.String("ReadOffsetsTopic"),
		Actions:   jsii.Strings("kafka-cluster:ReadData"),
		Resources: jsii.Strings(offsets),
	}))
}

// contextBool reads an optional boolean of the context: JSON true/false or
// the strings "true"/"false" (-c key=true passes a string).
func contextBool(m map[string]any, key, at string) (bool, error) {
	switch v := m[key].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("%s.%s %q: want true or false", at, key, v)
		}
		return b, nil
	}
	return false, fmt.Errorf("%s.%s: want true or false", at, key)
}
