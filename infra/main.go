// Command infra is Tributary's AWS CDK app: the data-plane stack (one
// Fargate service per pipeline, checkpoints, SSM documents, the row-skipped
// queue and function, the connection-test API, alarms) and, when its
// context is given, the customer-access stack for the MSK owner's account.
//
// The cdk CLI runs it through cdk.json from the repository root (`cdk
// synth`, `cdk deploy`; `make synth` does the same with the pinned CLI);
// run directly (`cd infra && go run .`) it reads cdk.json's context itself
// and writes to <repo>/cdk.out.
//
// Context (cdk.json or -c; every value may be given as a string, objects
// as JSON text):
//
//	pipelines        comma-separated pipeline names (default "shop")
//	deployment       a name prefixed to the stacks and shared resources, so
//	                 two deployments fit one account and region (optional)
//	customerRoles    {"<pipeline>":"<role ARN>",…}: the role in the MSK
//	                 owner's account each pipeline's task assumes (optional)
//	customerRoleArn  one such role for every pipeline (optional; older form)
//	mskClusterArn    an MSK cluster in this account the tasks write with
//	                 IAM (optional): grants kafka-cluster actions directly
//	vpcId            an existing VPC (default: a new one)
//	vpcCidr          a new VPC's range (default 10.0.0.0/16)
//	natGateways      a new VPC's NAT gateways: 1 (default) or 2, one per AZ
//	vpcEndpoints     "true": SSM, STS, Logs, ECR, SQS, CloudWatch interface
//	                 endpoints in a new VPC (DynamoDB and S3 gateway
//	                 endpoints are always there)
//	taskCpu          CPU units of a pipeline's task (default 512)
//	taskMemory       MiB of a pipeline's task (default 1024; GOMEMLIMIT is 3/4)
//	kmsKeyArn        the customer-managed key of the SecureStrings (optional)
//	image            a prebuilt task image URI (default: build the Dockerfile)
//	desiredCount     tasks per pipeline service (default 0: see docs/aws.md)
//	alarmEmail       an address subscribed to the alarm topic (optional)
//	silentMinutes    alarm when a source sends nothing this long (default 30)
//	connectionTestHosts {"<pipeline>":["<host>","*.<domain>","<CIDR>",…],…}:
//	                 the only brokers and database hosts the connection test
//	                 connects to for that pipeline (optional; default any)
//	privateWebhooks  <pipeline>,…: the pipelines whose row-skipped webhook
//	                 receivers may be at private addresses (with
//	                 webhooks.allow_private_network in the document)
//	glueRegistries   {"<pipeline>":"<registry>" or {"name","create"},…}: the
//	                 AWS Glue schema registry of a pipeline writing Avro; its
//	                 task role may register and read schemas there, and
//	                 "create": true makes the stack create it (optional)
//	apiThrottleRate  the API's steady requests per second, per route, all
//	                 callers together (default 5)
//	apiThrottleBurst the API's burst per route (default 10)
//	customerAccess   {"clusterArn","createTopics","connectionTestRoleArn",
//	                 "pipelines":[{"name","taskRoleArn","topicPrefix","externalId"},…]}
//	                 (or one pipeline as top-level "taskRoleArn","topicPrefix",
//	                 "externalId") synthesizes TributaryCustomerAccess too
//	assets           directory of the function builds, relative to the
//	                 repository root (default bin/functions)
package main

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"
)

func main() {
	defer jsii.Close()
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	props := &awscdk.AppProps{}
	// The cdk CLI always sets CDK_OUTDIR (relative to its own working
	// directory, which is ours: cdk.json runs the app from the root).
	if os.Getenv("CDK_OUTDIR") == "" {
		props.Context = contextFromCdkJSON(filepath.Join(root, "cdk.json"))
		props.Outdir = jsii.String(filepath.Join(root, "cdk.out"))
	}
	app := awscdk.NewApp(props)
	if err := build(app, root); err != nil {
		fmt.Fprintln(os.Stderr, "tributary cdk app:", err)
		os.Exit(1)
	}
	app.Synth(nil)
}

// repoRoot is the nearest directory holding cdk.json, from the working
// directory up: the root when the cdk CLI runs the app, its parent when
// run as `cd infra && go run .`.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "cdk.json")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no cdk.json in %s or above: run from the repository", dir)
		}
	}
}

// build adds the stacks that the app's context asks for, with cdk-nag's
// AWS Solutions checks. Paths in the context are relative to root.
func build(app awscdk.App, root string) error {
	c := appContext{app}
	deployment := c.str("deployment")
	if deployment != "" && !deploymentName.MatchString(deployment) {
		return fmt.Errorf("context deployment %q: want 1-20 of a-z, 0-9 and '-', starting with a letter", deployment)
	}
	stackProps := awscdk.StackProps{}
	if c.str("vpcId") != "" { // a VPC lookup needs an account and region
		stackProps.Env = &awscdk.Environment{
			Account: jsii.String(os.Getenv("CDK_DEFAULT_ACCOUNT")),
			Region:  jsii.String(os.Getenv("CDK_DEFAULT_REGION")),
		}
	}
	names := c.str("pipelines")
	if names == "" {
		names = "shop"
	}
	var pipelines []Pipeline
	for _, n := range strings.Split(names, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !pipelineName.MatchString(n) {
			return fmt.Errorf("context pipelines: %q is not a pipeline name (1-64 of a-z, 0-9, '_', '-')", n)
		}
		if n == reservedPipeline {
			return fmt.Errorf("context pipelines: %q is reserved: its secret scope %s/%s/ would hold every pipeline's document", n, parameterRoot(""), n)
		}
		pipelines = append(pipelines, Pipeline{Name: n, CustomerRoleARN: c.str("customerRoleArn")})
	}
	roles, err := c.object("customerRoles")
	if err != nil {
		return err
	}
	for name, v := range roles {
		arn, _ := v.(string)
		if !roleARN.MatchString(arn) {
			return fmt.Errorf("context customerRoles.%s %q: want arn:aws:iam::<account>:role/<name>", name, arn)
		}
		found := false
		for i := range pipelines {
			if pipelines[i].Name == name {
				pipelines[i].CustomerRoleARN, found = arn, true
			}
		}
		if !found {
			return fmt.Errorf("context customerRoles: %q is not one of the pipelines (%s)", name, names)
		}
	}
	hosts, err := c.object("connectionTestHosts")
	if err != nil {
		return err
	}
	for name, v := range hosts {
		list, _ := v.([]any)
		at := "context connectionTestHosts." + name
		if len(list) == 0 {
			return fmt.Errorf("%s: want a list of host names, *.domain patterns, IP addresses or CIDR ranges", at)
		}
		found := false
		for i := range pipelines {
			if pipelines[i].Name != name {
				continue
			}
			found = true
			for j, e := range list {
				h, _ := e.(string)
				if msg := hostPatternProblem(h); msg != "" {
					return fmt.Errorf("%s[%d] %q: %s", at, j, h, msg)
				}
				pipelines[i].AllowedHosts = append(pipelines[i].AllowedHosts, strings.ToLower(h))
			}
		}
		if !found {
			return fmt.Errorf("context connectionTestHosts: %q is not one of the pipelines (%s)", name, names)
		}
	}
	glue, err := c.object("glueRegistries")
	if err != nil {
		return err
	}
	if err := glueRegistries(glue, pipelines, names); err != nil {
		return err
	}
	for n := range strings.SplitSeq(c.str("privateWebhooks"), ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		found := false
		for i := range pipelines {
			if pipelines[i].Name == n {
				pipelines[i].PrivateWebhook, found = true, true
			}
		}
		if !found {
			return fmt.Errorf("context privateWebhooks: %q is not one of the pipelines (%s)", n, names)
		}
	}
	throttleRate, err := c.number("apiThrottleRate", defaultApiThrottleRate)
	if err != nil {
		return err
	}
	throttleBurst, err := c.number("apiThrottleBurst", defaultApiThrottleBurst)
	if err != nil {
		return err
	}
	if throttleRate < 1 || throttleBurst < 1 {
		return fmt.Errorf("context apiThrottleRate %d, apiThrottleBurst %d: want at least 1 each", throttleRate, throttleBurst)
	}
	network := NetworkProps{VpcID: c.str("vpcId"), Cidr: c.str("vpcCidr"), InterfaceEndpoints: c.str("vpcEndpoints") == "true"}
	if network.Cidr != "" {
		if _, err := netip.ParsePrefix(network.Cidr); err != nil || !strings.Contains(network.Cidr, ".") {
			return fmt.Errorf("context vpcCidr %q: want an IPv4 range such as 10.42.0.0/16", network.Cidr)
		}
	}
	if network.NatGateways, err = c.number("natGateways", 1); err != nil {
		return err
	}
	if network.NatGateways < 1 || network.NatGateways > 2 {
		return fmt.Errorf("context natGateways %d: want 1, or 2 (one per AZ)", network.NatGateways)
	}
	cpu, err := c.number("taskCpu", defaultTaskCPU)
	if err != nil {
		return err
	}
	mem, err := c.number("taskMemory", defaultTaskMemoryMiB)
	if err != nil {
		return err
	}
	if err := fargateSize(cpu, mem); err != nil {
		return err
	}
	kms := c.str("kmsKeyArn")
	if kms != "" && !kmsKeyARN.MatchString(kms) {
		return fmt.Errorf("context kmsKeyArn %q: want arn:aws:kms:<region>:<account>:key/<id>", kms)
	}
	desired, err := c.number("desiredCount", 0)
	if err != nil {
		return err
	}
	silent, err := c.number("silentMinutes", defaultSilentMinutes)
	if err != nil {
		return err
	}
	if silent < 1 {
		return fmt.Errorf("context silentMinutes %d: want at least 1", silent)
	}
	assets := c.str("assets")
	if assets == "" {
		assets = "bin/functions"
	}
	if !filepath.IsAbs(assets) {
		assets = filepath.Join(root, assets)
	}
	for _, fn := range []string{"connection-test", "row-skipped", "backfill"} {
		if _, err := os.Stat(filepath.Join(assets, fn, "bootstrap")); err != nil {
			return fmt.Errorf("%s/bootstrap is missing: run `make build-functions` first", filepath.Join(assets, fn))
		}
	}
	if arn := c.str("mskClusterArn"); arn != "" {
		if _, err := topicARN(arn, "x"); err != nil {
			return fmt.Errorf("context mskClusterArn: %w", err)
		}
	}
	NewDataPlaneStack(app, stackName(deployment, "Tributary"), &DataPlaneProps{
		StackProps:         stackProps,
		Deployment:         deployment,
		Pipelines:          pipelines,
		ImageDir:           root,
		Image:              c.str("image"),
		ConnectionTestCode: filepath.Join(assets, "connection-test"),
		RowSkippedCode:     filepath.Join(assets, "row-skipped"),
		BackfillCode:       filepath.Join(assets, "backfill"),
		Network:            network,
		TaskCPU:            cpu,
		TaskMemoryMiB:      mem,
		KMSKeyARN:          kms,
		MSKClusterARN:      c.str("mskClusterArn"),
		DesiredCount:       desired,
		AlarmEmail:         c.str("alarmEmail"),
		SilentMinutes:      silent,
		ApiThrottleRate:    float64(throttleRate),
		ApiThrottleBurst:   throttleBurst,
	})

	ca, err := c.object("customerAccess")
	if err != nil {
		return err
	}
	if ca != nil {
		props, err := customerAccessProps(ca, deployment)
		if err != nil {
			return err
		}
		NewCustomerAccessStack(app, stackName(deployment, "TributaryCustomerAccess"), props)
	}
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	return nil
}

// hostPattern is a host name or *.<domain> (lower case, letters, digits,
// '-' and '.').
var hostPattern = regexp.MustCompile(`^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// hostPatternProblem says what is wrong with an entry of
// connectionTestHosts, or "": a host name, *.<domain>, an IP address or
// a CIDR range (functions/connection-test/targets.go matches them).
func hostPatternProblem(h string) string {
	if _, err := netip.ParseAddr(h); err == nil {
		return ""
	}
	if strings.Contains(h, "/") {
		if _, err := netip.ParsePrefix(h); err != nil {
			return "not a CIDR range"
		}
		return ""
	}
	if h == "*" || !hostPattern.MatchString(strings.ToLower(h)) {
		return "want a host name, *.domain, an IP address or a CIDR range"
	}
	return ""
}

// appContext reads context values the way the cdk CLI hands them over:
// from cdk.json as JSON values, from -c as strings (JSON text for objects).
type appContext struct{ app awscdk.App }

func (c appContext) raw(key string) any {
	return c.app.Node().TryGetContext(jsii.String(key))
}

func (c appContext) str(key string) string {
	switch v := c.raw(key).(type) {
	case string:
		return strings.TrimSpace(v)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case []any: // a JSON list of names, e.g. pipelines in cdk.json
		var parts []string
		for _, e := range v {
			if s, ok := e.(string); ok {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ",")
	}
	return ""
}

func (c appContext) number(key string, def int) (int, error) {
	switch v := c.raw(key).(type) {
	case nil:
		return def, nil
	case float64:
		if v >= 0 && v == float64(int(v)) {
			return int(v), nil
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fmt.Errorf("context %s: want a whole number ≥ 0", key)
}

// object is a JSON object given as one (cdk.json) or as its text (-c).
func (c appContext) object(key string) (map[string]any, error) {
	switch v := c.raw(key).(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil, nil
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(v), &m); err != nil || m == nil {
			return nil, fmt.Errorf("context %s: want a JSON object, e.g. -c %s='{\"taskRoleArn\":\"…\"}'", key, key)
		}
		return m, nil
	}
	return nil, fmt.Errorf("context %s: want a JSON object", key)
}

// contextFromCdkJSON reads the "context" object of cdk.json, which only the
// cdk CLI passes to an app on its own.
func contextFromCdkJSON(path string) *map[string]any {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if json.Unmarshal(data, &doc) != nil {
		return nil
	}
	return &doc.Context
}
