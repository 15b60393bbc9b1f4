package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/jsii-runtime-go"
)

// NetworkProps say where the tasks and functions run. With VpcID the
// stack uses an existing VPC (its private subnets need a route to the
// brokers, the database and the AWS APIs: docs/aws.md); otherwise it makes
// one with Cidr, NatGateways and, optionally, interface endpoints.
type NetworkProps struct {
	VpcID string
	// Cidr of a new VPC (default 10.0.0.0/16): pick one that does not
	// overlap the VPCs of MSK and the database, so they can be peered.
	Cidr string
	// NatGateways of a new VPC: 1 (default) or 2, one per AZ, so that an
	// AZ failure does not cut the other AZ's tasks off the AWS APIs.
	NatGateways int
	// InterfaceEndpoints adds SSM, STS, CloudWatch Logs, ECR, SQS and
	// CloudWatch endpoints to a new VPC: the tasks reach the AWS APIs they
	// need without a NAT gateway.
	InterfaceEndpoints bool
}

// newVpc is the existing VPC or a new one across two AZs. A new VPC
// always gets the DynamoDB and S3 gateway endpoints (free): checkpoint
// writes and lease renewals then do not depend on the NAT gateway.
func newVpc(stack awscdk.Stack, n NetworkProps) awsec2.IVpc {
	if n.VpcID != "" {
		return awsec2.Vpc_FromLookup(stack, jsii.String("Vpc"), &awsec2.VpcLookupOptions{VpcId: jsii.String(n.VpcID)})
	}
	cidr := n.Cidr
	if cidr == "" {
		cidr = defaultVpcCidr
	}
	nat := n.NatGateways
	if nat <= 0 {
		nat = 1
	}
	vpc := awsec2.NewVpc(stack, jsii.String("Vpc"), &awsec2.VpcProps{
		IpAddresses: awsec2.IpAddresses_Cidr(jsii.String(cidr)),
		MaxAzs:      jsii.Number(2),
		NatGateways: jsii.Number(float64(nat)),
		FlowLogs: &map[string]*awsec2.FlowLogOptions{
			"All": {TrafficType: awsec2.FlowLogTrafficType_REJECT},
		},
		GatewayEndpoints: &map[string]*awsec2.GatewayVpcEndpointOptions{
			"DynamoDb": {Service: awsec2.GatewayVpcEndpointAwsService_DYNAMODB()},
			"S3":       {Service: awsec2.GatewayVpcEndpointAwsService_S3()}, // ECR image layers
		},
	})
	if n.InterfaceEndpoints {
		for _, e := range []struct {
			id  string
			svc awsec2.InterfaceVpcEndpointAwsService
		}{
			{"Ssm", awsec2.InterfaceVpcEndpointAwsService_SSM()}, {"Sts", awsec2.InterfaceVpcEndpointAwsService_STS()},
			{"Logs", awsec2.InterfaceVpcEndpointAwsService_CLOUDWATCH_LOGS()}, {"EcrApi", awsec2.InterfaceVpcEndpointAwsService_ECR()},
			{"EcrDocker", awsec2.InterfaceVpcEndpointAwsService_ECR_DOCKER()}, {"Sqs", awsec2.InterfaceVpcEndpointAwsService_SQS()},
			{"Monitoring", awsec2.InterfaceVpcEndpointAwsService_CLOUDWATCH_MONITORING()},
		} {
			ep := vpc.AddInterfaceEndpoint(jsii.String(e.id), &awsec2.InterfaceVpcEndpointOptions{Service: e.svc})
			// EC23 (open ingress) cannot read the VPC's CIDR, a token: the
			// endpoint's group admits 443 from this VPC's range only.
			suppress(ep, "CdkNagValidationFailure", "The endpoint's security group admits HTTPS from the VPC's own CIDR only.")
		}
	}
	return vpc
}

// defaultVpcCidr is a new VPC's range unless -c vpcCidr says otherwise.
const defaultVpcCidr = "10.0.0.0/16"

// Kafka ports of MSK per authentication, for the starter document and
// the security-group advice in docs/aws.md.
const (
	portIAM   = 9098
	portSCRAM = 9096
	portTLS   = 9094
)
