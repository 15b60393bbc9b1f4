package main

import (
	"fmt"
	"regexp"
	"strconv"
)

// minExternalIDLength is the shortest external id the customer-access
// stack takes: docs/aws.md generates 40 random hex digits.
const minExternalIDLength = 16

var (
	externalID = regexp.MustCompile(`^[\w+=,.@:/-]+$`)
	roleARN    = regexp.MustCompile(`^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]{1,64}$`)
	kmsKeyARN  = regexp.MustCompile(`^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[a-zA-Z0-9-]+$`)
)

// customerAccessProps reads -c customerAccess: several pipelines, each
// with its task role and topic prefix, or (the older form) one pipeline as
// top-level taskRoleArn and topicPrefix.
func customerAccessProps(ca map[string]any, deployment string) (*CustomerAccessProps, error) {
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	props := &CustomerAccessProps{
		ExternalID:            str(ca, "externalId"),
		ClusterARN:            str(ca, "clusterArn"),
		ConnectionTestRoleARN: str(ca, "connectionTestRoleArn"),
		Deployment:            deployment,
	}
	switch v := ca["createTopics"].(type) {
	case bool:
		props.CreateTopics = v
	case string:
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("context customerAccess.createTopics %q: want true or false", v)
		}
		props.CreateTopics = b
	}
	// exactlyOnce: for every pipeline (-c customerAccess with
	// "exactlyOnce":true), or per pipeline entry.
	allExactlyOnce, err := contextBool(ca, "exactlyOnce", "context customerAccess")
	if err != nil {
		return nil, err
	}
	if str(ca, "clusterArn") == "" {
		return nil, fmt.Errorf("context customerAccess: clusterArn is missing (want clusterArn and pipelines, each with its externalId)")
	}
	if a := props.ConnectionTestRoleARN; a != "" && !roleARN.MatchString(a) {
		return nil, fmt.Errorf("context customerAccess.connectionTestRoleArn %q: want arn:aws:iam::<account>:role/<name>", a)
	}
	var entries []map[string]any
	switch list := ca["pipelines"].(type) {
	case nil:
		if str(ca, "taskRoleArn") == "" && str(ca, "topicPrefix") == "" {
			return nil, fmt.Errorf("context customerAccess: pipelines is missing (want [{\"name\",\"taskRoleArn\",\"topicPrefix\"},…])")
		}
		entries = []map[string]any{{"name": str(ca, "topicPrefix"), "taskRoleArn": str(ca, "taskRoleArn"), "topicPrefix": str(ca, "topicPrefix")}}
	case []any:
		for _, e := range list {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("context customerAccess.pipelines: want objects {\"name\",\"taskRoleArn\",\"topicPrefix\"}")
			}
			entries = append(entries, m)
		}
	default:
		return nil, fmt.Errorf("context customerAccess.pipelines: want a list")
	}
	// One external id per pipeline: with one shared by several pipelines,
	// a document holding its own pipeline's copy could sign in as every
	// other pipeline's writer. The top-level externalId (the older form)
	// still serves a single pipeline.
	if props.ExternalID != "" && len(entries) > 1 {
		return nil, fmt.Errorf("context customerAccess.externalId: one external id shared by %d pipelines lets each pipeline's document sign in as the others' writers; "+
			"give each pipelines[i] its own externalId (docs/aws.md, step 7) and drop the shared one", len(entries))
	}
	seen := map[string]bool{}
	extSeen := map[string]string{}
	for i, e := range entries {
		w := Writer{Pipeline: str(e, "name"), TaskRoleARN: str(e, "taskRoleArn"), TopicPrefix: str(e, "topicPrefix"), ExternalID: str(e, "externalId")}
		at := fmt.Sprintf("context customerAccess.pipelines[%d]", i)
		if !pipelineName.MatchString(w.Pipeline) {
			return nil, fmt.Errorf("%s.name %q: want a pipeline name (a-z, 0-9, '_', '-')", at, w.Pipeline)
		}
		if seen[w.Pipeline] {
			return nil, fmt.Errorf("%s.name %q: given twice", at, w.Pipeline)
		}
		seen[w.Pipeline] = true
		if n := writerRoleName(deployment, w.Pipeline); len(n) > 64 {
			return nil, fmt.Errorf("%s.name %q: the role name %s is longer than IAM's 64 characters", at, w.Pipeline, n)
		}
		if !roleARN.MatchString(w.TaskRoleARN) {
			return nil, fmt.Errorf("%s.taskRoleArn %q: want the data-plane stack's TaskRoleArn output (arn:aws:iam::<account>:role/<name>)", at, w.TaskRoleARN)
		}
		prefix := w.TopicPrefix
		if prefix == "" {
			prefix = w.Pipeline
		}
		if _, err := topicARN(props.ClusterARN, prefix); err != nil {
			return nil, fmt.Errorf("%s: %w", at, err)
		}
		ext, field := w.ExternalID, at+".externalId"
		if ext == "" {
			ext, field = props.ExternalID, "context customerAccess.externalId"
		}
		switch {
		case ext == "":
			return nil, fmt.Errorf("%s.externalId is missing: the value of the pipeline's %s/%s/external-id SecureString (docs/aws.md, step 7)", at, parameterRoot(deployment), w.Pipeline)
		case len(ext) > 1224 || !externalID.MatchString(ext):
			return nil, fmt.Errorf("%s: want 2 to 1224 of letters, digits and +=,.@:/- (the value is not shown)", field)
		case len(ext) < minExternalIDLength:
			return nil, fmt.Errorf("%s: %d characters, want at least %d random ones (e.g. openssl rand -hex 20; the value is not shown)", field, len(ext), minExternalIDLength)
		case extSeen[ext] != "":
			return nil, fmt.Errorf("%s: the same as pipeline %s's; each pipeline needs its own (the value is not shown)", field, extSeen[ext])
		}
		extSeen[ext] = w.Pipeline
		eos, err := contextBool(e, "exactlyOnce", at)
		if err != nil {
			return nil, err
		}
		w.ExactlyOnce = allExactlyOnce || eos
		props.Writers = append(props.Writers, w)
	}
	if len(props.Writers) == 0 {
		return nil, fmt.Errorf("context customerAccess.pipelines: empty")
	}
	return props, nil
}

// fargateSize checks cpu and memory against the combinations Fargate
// runs (up to 4 vCPU), so a bad size fails at synth, not at deploy.
func fargateSize(cpu, mem int) error {
	var lo, hi, step int
	switch cpu {
	case 256:
		if mem == 512 || mem == 1024 || mem == 2048 {
			return nil
		}
		return fmt.Errorf("context taskMemory %d: with taskCpu 256 want 512, 1024 or 2048", mem)
	case 512:
		lo, hi, step = 1024, 4096, 1024
	case 1024:
		lo, hi, step = 2048, 8192, 1024
	case 2048:
		lo, hi, step = 4096, 16384, 1024
	case 4096:
		lo, hi, step = 8192, 30720, 1024
	default:
		return fmt.Errorf("context taskCpu %d: want 256, 512, 1024, 2048 or 4096", cpu)
	}
	if mem < lo || mem > hi || mem%step != 0 {
		return fmt.Errorf("context taskMemory %d: with taskCpu %d want %d to %d in steps of %d", mem, cpu, lo, hi, step)
	}
	return nil
}
