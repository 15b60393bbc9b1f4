package main

import (
	"regexp"
	"strings"
)

// A deployment name (-c deployment=staging) prefixes the stack names and
// every resource name that is unique in an account and region, so two
// deployments can live side by side. Without one the names are the ones
// earlier releases used, so an existing stack updates in place.

var (
	deploymentName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,19}$`)
	pipelineName   = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
)

// reservedPipeline is the one name a pipeline may not take: the documents
// live under <root>/pipelines/, which is also where that pipeline's secrets
// would be (pkg/config's ReservedNames says the same for the document).
const reservedPipeline = "pipelines"

// stackName is base, or <Deployment>-base (CloudFormation stack names are
// letters, digits and '-').
func stackName(deployment, base string) string {
	if deployment == "" {
		return base
	}
	return deployment + "-" + base
}

// resourceName is name, or <deployment>-name.
func resourceName(deployment, name string) string {
	if deployment == "" {
		return name
	}
	return deployment + "-" + name
}

// parameterRoot is where a deployment's SSM parameters live: documents
// under <root>/pipelines/<name>, secrets under <root>/<name>/. The
// Lambdas and the task read only their pipeline's part of it.
func parameterRoot(deployment string) string {
	if deployment == "" {
		return "/tributary"
	}
	return "/tributary-" + deployment
}

// outputKey is a CloudFormation output name (letters and digits) for a
// pipeline: outputKey("Service", "shop-eu") = "ServiceShopEu".
func outputKey(kind, pipeline string) string {
	var b strings.Builder
	b.WriteString(kind)
	up := true
	for _, r := range pipeline {
		switch {
		case r >= 'a' && r <= 'z':
			if up {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			up = false
		case r >= '0' && r <= '9':
			b.WriteRune(r)
			up = false
		default:
			up = true
		}
	}
	return b.String()
}
