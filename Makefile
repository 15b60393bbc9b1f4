# The one entry point for people and CI. See README.md.
SHELL := /bin/bash
GO ?= go
export GOFLAGS := -buildvcs=false

.PHONY: build test unit integration test-mongodb race soak faults fuzz-debezium demo services-up services-down bench bench-quick bench-baseline bench-micro profile lint fuzz clean build-functions cdk-app synth cfn-lint

# cfn-lint, pinned, in a venv under the git-ignored .services/; installed
# once per version (the binary exists only after pip succeeded). `make
# test` lints the templates its CDK tests synthesize (every stack: data
# plane with and without a customer role or a deployment name, customer
# access with and without topic creation) and those the real cdk CLI
# synthesizes from the repository root. Per-resource ignores carry their
# reason in infra/ (lintIgnore).
CFN_LINT_VERSION := 1.58.0
CFN_LINT := .services/cfn-lint-$(CFN_LINT_VERSION)/bin/cfn-lint
TEST_TEMPLATES := .services/cfn-templates
# The AWS CDK CLI (npm aws-cdk), pinned in integration/services/cdk.sh,
# installed under .services/. `make test` and `make synth` run it from the
# repository root, as a user runs `cdk`, offline: no account, no lookups.
CDK := $(shell bash integration/services/cdk.sh --path)
CDK_OFFLINE := AWS_EC2_METADATA_DISABLED=true CDK_DISABLE_VERSION_CHECK=1 CDK_DISABLE_CLI_TELEMETRY=true
# What `make test` synthesizes with the CLI: both stacks, the customer
# access one from -c JSON text (two pipelines, each with its own external
# id, the connection test's role), per-pipeline customer roles, the
# connection test's allowed hosts and a private webhook receiver, as
# docs/aws.md shows.
CDK_TEST_CONTEXT := -c pipelines=shop,billing -c alarmEmail=ops@example.com -c privateWebhooks=billing \
  -c 'customerRoles={"shop":"arn:aws:iam::111122223333:role/tributary-writer-shop","billing":"arn:aws:iam::111122223333:role/tributary-writer-billing"}' \
  -c 'connectionTestHosts={"shop":["*.kafka.us-east-1.amazonaws.com","shop.cluster-xyz.us-east-1.rds.amazonaws.com"]}' \
  -c 'customerAccess={"clusterArn":"arn:aws:kafka:us-east-1:111122223333:cluster/orders/0a1b2c3d-4e5f-6789-abcd-ef0123456789-2","connectionTestRoleArn":"arn:aws:iam::444455556666:role/Tributary-ConnectionTestFunctionServiceRole-X","pipelines":[{"name":"shop","taskRoleArn":"arn:aws:iam::444455556666:role/Tributary-PipelineshopTaskRole-X","externalId":"ext-from-cli-shop-5e0c2a91"},{"name":"billing","taskRoleArn":"arn:aws:iam::444455556666:role/Tributary-PipelinebillingTaskRole-X","topicPrefix":"bill","externalId":"ext-from-cli-billing-7b3d"}]}'

# `tributary version` prints these; outside a git checkout they read "dev"/"unknown".
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

build: ## bin/tributary, stamped with VERSION and COMMIT
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/tributary ./cmd/tributary

# Every oracle feature runs in `make test` on both sources. Of the shape features
# (docs/testing.md), dropstopped and switch join it on both sources, since each adds seconds,
# not minutes; the others are the soak's.
ORACLE_PG_TEST_FEATURES := keyupdate,multitable,savepoint,rollback,bigtx,truncate,ddl,ddlstopped,nulls,large,encodings,tables,startkill,bfstopped,dropstopped,switch
ORACLE_MARIADB_TEST_FEATURES := all,dropstopped,switch

test: services-up $(CFN_LINT) $(CDK) ## unit + integration tests on real services, the CDK app's tests, `cdk synth`, cfn-lint
	bash .ci/tracked-files.sh
	bash .ci/layout.sh
	bash .ci/comments.sh
	$(GO) vet ./...
	# The integration tests are packages by concern (docs/testing.md, "Layout"), which go test
	# runs two at a time on this machine kind (-p defaults to GOMAXPROCS); the longest,
	# integration/faults, takes ~11 min of the ~35 the tests take one after another. The
	# timeout is per package and leaves room for a loaded machine.
	ORACLE_FEATURES_POSTGRES=$(ORACLE_PG_TEST_FEATURES) ORACLE_FEATURES_MARIADB=$(ORACLE_MARIADB_TEST_FEATURES) $(GO) test -count=1 -timeout 45m ./...
	@if bash integration/services/kafka-cluster.sh status | grep -q pid; then \
	  echo 'the tests left the three-broker cluster running (integration/itest/harness.go stopStartedServices)' >&2; exit 1; fi
	rm -rf $(TEST_TEMPLATES)
	cd infra && CFN_TEMPLATES_DIR=$(CURDIR)/$(TEST_TEMPLATES) $(GO) test -count=1 -timeout 15m ./...
	$(CFN_LINT) $(TEST_TEMPLATES)/*.template.json
	rm -rf cdk.out
	$(CDK_OFFLINE) $(CDK) synth --quiet $(CDK_TEST_CONTEXT)
	$(CFN_LINT) cdk.out/*.template.json
	grep -q '"ext-from-cli-shop-5e0c2a91"' cdk.out/TributaryCustomerAccess.template.json
	grep -q '"ext-from-cli-billing-7b3d"' cdk.out/TributaryCustomerAccess.template.json
	grep -q PIPELINE_WRITER_ROLES cdk.out/Tributary.template.json
	grep -q '"PRIVATE_WEBHOOK_PIPELINES": "billing"' cdk.out/Tributary.template.json
	! grep -q BootstrapVersion cdk.out/TributaryCustomerAccess.template.json

unit: ## unit tests only (no services)
	$(GO) test -count=1 -short ./...

integration: services-up ## integration tests only
	$(GO) test -count=1 -timeout 70m ./integration/...

# The integration/mongodb suite against a real deployment (a replica set or sharded cluster:
# Atlas, DocumentDB, a local mongod) instead of mongo-java-server: docs/mongodb.md. Each test
# creates a database of its own (tributary-style unique name), works only there and drops it;
# the user needs readWrite and dropDatabase on those and changeStream on the deployment. The
# driver-layer tests watch as MONGODB_SCOPE says (cluster, the default here, or collection);
# the CLI tests run `tributary run`, which watches the deployment. Kafka on 127.0.0.1:9092 is
# started if missing. The URI (with its password) is passed in the environment, never echoed.
test-mongodb: export MONGODB_SCOPE ?= cluster
test-mongodb: ## integration/mongodb against a real deployment: make test-mongodb MONGODB_URI=mongodb://…
	@if [ -z "$$MONGODB_URI" ]; then echo "usage: make test-mongodb MONGODB_URI=mongodb://USER:PASSWORD@HOST:27017/?replicaSet=NAME [MONGODB_SCOPE=cluster|collection]" >&2; exit 2; fi
	bash integration/services/up.sh kafka
	$(GO) test -count=1 -p 1 -timeout 40m -v ./integration/mongodb/

# Under the race detector (not in `make test`, whose half hour it would outgrow): the packages'
# tests, and the PostgreSQL and MariaDB integration tests (a connection closed from a context's
# AfterFunc while its owner may close it too, pkg/source/mysql closeOnDone; the streams'
# handoff to a second goroutine, pkg/source/handoff.go). About 15 minutes.
# GOFLAGS builds the tributary processes the integration tests start with -race too
# (integration/itest/main.go); their reports go to bin/race/, which must stay empty.
race: services-up ## unit tests and the PostgreSQL and MariaDB integration tests under -race
	rm -rf bin/race && mkdir -p bin/race
	GOFLAGS=-race GORACE=log_path=$(CURDIR)/bin/race/race $(GO) test -race -count=1 -p 1 -timeout 40m \
		./pkg/... ./cmd/... ./integration/mysql/ ./integration/postgres/
	@if ls bin/race/race.* >/dev/null 2>&1; then echo "DATA RACE reported: bin/race/" >&2; exit 1; fi

# The randomized workload oracle (TestRandomOracle, integration/scenario/scenario_*_test.go), long:
# SOAK_MINUTES of writing per source and a 500,000-row transaction. `make test` runs it for
# 40 s per source with a 50,000-row one. A failing seed replays with the command it prints,
# e.g. ORACLE_SEED=123 go test -count=1 -v -run 'TestRandomOracle/mariadb' ./integration/scenario/
# ORACLE_FEATURES (or ORACLE_FEATURES_POSTGRES / _MARIADB) picks the workload's shapes.
# The shape features toast, charsets, keyless, identity, dropstopped, switch, refuse
# (docs/testing.md) are not part of "all"; `make test` runs dropstopped and switch
# (ORACLE_PG_TEST_FEATURES, ORACLE_MARIADB_TEST_FEATURES) and keeps its budget; the soak runs
# every one of them.
SOAK_MINUTES ?= 60
SOAK_FEATURES ?= all,toast,charsets,keyless,identity,dropstopped,switch,refuse
soak: services-up ## the randomized oracle for SOAK_MINUTES (default 60) per source, under random SIGKILLs
	ORACLE_SECONDS=$$(( $(SOAK_MINUTES) * 60 )) ORACLE_BIG_ROWS=$${ORACLE_BIG_ROWS:-500000} \
	ORACLE_TX_PAUSE_MS=$${ORACLE_TX_PAUSE_MS:-10} ORACLE_FEATURES=$${ORACLE_FEATURES:-$(SOAK_FEATURES)} \
	  $(GO) test -count=1 -v -timeout $$(( $(SOAK_MINUTES) * 2 + 40 ))m -run '^TestRandomOracle$$' ./integration/scenario/

# The differential oracle (TestDebeziumDifferential, integration/scenario/differential_test.go): random
# schemas and workloads through real Debezium and Tributary at once, rounds of seed, seed+1, …
# for MINUTES per source. `make test` runs one round per source with a random seed; a failing
# seed replays with the command it prints. DIFF_KNOWN=1 also generates the known differences.
SEED ?= $(shell echo $$RANDOM)
MINUTES ?= 10
fuzz-debezium: services-up ## the Debezium differential oracle for MINUTES (default 10) per source from SEED
	DIFF_SEED=$(SEED) DIFF_MINUTES=$(MINUTES) \
	  $(GO) test -count=1 -v -timeout $$(( $(MINUTES) * 2 + 20 ))m -run '^TestDebeziumDifferential$$' ./integration/scenario/

# The fault suites in full: the source faults (restarts, killed connections, failovers, the
# blocked-port outage past the window) and the multi-broker suite
# (integration/faults/kafka_cluster_faults_test.go) on the three-broker cluster of
# integration/services/kafka-cluster.sh, which the test starts: every fault, longer. `make test`
# runs their short forms. The tables of faults × (gaps, duplicates, longest stall, recovered by
# itself?) are in the log. KAFKA_FAULTS=all (by hand: go test -v -run TestKafkaClusterFaults
# ./integration/faults/) runs every broker fault with the short durations.
faults: services-up ## the source and multi-broker fault suites, full form
	TRIBUTARY_FAULTS_LONG=1 KAFKA_FAULTS=full $(GO) test -count=1 -v -timeout 90m -run 'Fault|BlockedPort|Failover' ./integration/faults/

demo: services-up build ## a shop database streamed to Kafka, messages printed
	bash integration/demo.sh

services-up: ## install what is missing; start Kafka and PostgreSQL on 127.0.0.1
	bash integration/services/up.sh

services-down:
	bash integration/services/down.sh

# Sizes: make bench BENCH_ROWS=200000 BENCH_LATENCY_SECONDS=20 (also BENCH_RATE, BENCH_SYSTEMS,
# BENCH_SCENARIOS, BENCH_PARTITIONS, BENCH_JVM_HEAP, BENCH_KEEP, BENCH_PARALLEL_TABLES,
# BENCH_SNAPSHOT_RATE, BENCH_QUIET_LOAD, BENCH_REPEAT, BENCH_BIGTX_ROWS, BENCH_LARGE_ROWS, BENCH_LARGE_BYTES,
# BENCH_FLEET_PIPELINES; see integration/bench/main.go). BENCH_SERVICES= (empty)
# skips services-up where the services already run.
BENCH_SERVICES ?= services-up
# The MongoDB scenarios' server: a mongo-java-server of the bench's own on this port, started
# again, empty, before each run (integration/bench/README.md); BENCH_MONGODB_URL (or
# BENCH_MONGODB_FRESH= with no port) measures on that one, or the services' shared one.
export BENCH_MONGODB_FRESH ?= 27118
bench: $(BENCH_SERVICES) build ## Tributary vs Debezium side by side; table on stdout, JSON in integration/bench/results/ (quiet machine) or $TMPDIR/tributary-bench/
	bash integration/bench/debezium/build.sh
	$(GO) run ./integration/bench

# Every scenario of `make bench`, small, beside Debezium tuned (the default settings' JVM runs
# would double its time): a check of each change to the hot path, ≤ 5 minutes on a quiet
# machine. The BENCH_* variables still apply.
BENCH_QUICK := BENCH_ROWS=$${BENCH_ROWS:-20000} BENCH_LATENCY_SECONDS=$${BENCH_LATENCY_SECONDS:-8} \
	BENCH_PARALLEL_TABLES=$${BENCH_PARALLEL_TABLES:-2} BENCH_SNAPSHOT_RATE=$${BENCH_SNAPSHOT_RATE:-2000} \
	BENCH_BIGTX_ROWS=$${BENCH_BIGTX_ROWS:-10000,50000} BENCH_LARGE_ROWS=$${BENCH_LARGE_ROWS:-300} \
	BENCH_FLEET_PIPELINES=$${BENCH_FLEET_PIPELINES:-1,8} \
	BENCH_TABLES=$${BENCH_TABLES:-100} \
	BENCH_SYSTEMS=$${BENCH_SYSTEMS:-tributary,tributary-exactly-once,tributary-gomaxprocs1,tributary-avro,debezium-tuned}
bench-quick: $(BENCH_SERVICES) build ## make bench, every scenario small (20,000 rows/changes, 8 s latency, Debezium tuned)
	bash integration/bench/debezium/build.sh
	$(BENCH_QUICK) $(GO) run ./integration/bench

# Before and after in one run: make bench-baseline REV=<commit> builds that commit's tributary
# (git archive, into bin/tributary-baseline) and runs bench-quick (BENCH_TARGET=bench: the full
# run) with it as tributary-baseline, right after today's build in every scenario.
BENCH_TARGET ?= bench-quick
bench-baseline: ## make bench-quick with REV's build beside today's (tributary ÷ tributary-baseline)
	@test -n "$(REV)" || { echo "usage: make bench-baseline REV=<commit> [BENCH_TARGET=bench]" >&2; exit 2; }
	rm -rf bin/baseline-src && mkdir -p bin/baseline-src
	git archive "$(REV)" | tar -x -C bin/baseline-src
	cd bin/baseline-src && $(GO) build -trimpath -ldflags "-X main.version=$(REV) -X main.commit=$$(git rev-parse $(REV))" -o ../tributary-baseline ./cmd/tributary
	rm -rf bin/baseline-src
	$(MAKE) $(BENCH_TARGET) BENCH_BASELINE=$(CURDIR)/bin/tributary-baseline

# CPU profiles of make bench's drains (PostgreSQL and MariaDB, backfill and streaming; the
# BENCH_* variables apply), each tributary process's written by itself (TRIBUTARY_CPUPROFILE),
# with its peak heap profile beside it (TRIBUTARY_HEAPPROFILE, bin/profile/runs/heap-*.pprof),
# merged into bin/profile/cpu.pprof: go tool pprof -top bin/profile/cpu.pprof. Its bench JSON goes
# to $$TMPDIR.
profile: $(BENCH_SERVICES) build ## CPU profile of make bench's drains, merged into bin/profile/cpu.pprof
	rm -rf bin/profile && mkdir -p bin/profile/runs
	TRIBUTARY_CPUPROFILE=$(CURDIR)/bin/profile/runs TRIBUTARY_HEAPPROFILE=$(CURDIR)/bin/profile/runs BENCH_SYSTEMS=tributary BENCH_QUIET_LOAD=0.000001 \
		BENCH_SCENARIOS=$${BENCH_SCENARIOS:-backfill,backfill-mariadb,streaming,streaming-mariadb} \
		BENCH_ROWS=$${BENCH_ROWS:-500000} $(GO) run ./integration/bench > bin/profile/bench.md
	$(GO) tool pprof -proto bin/profile/runs/cpu-*.pprof > bin/profile/cpu.pprof
	@echo "go tool pprof -top bin/profile/cpu.pprof"

bench-micro: ## hot-path micro-benchmarks (encoder, pipeline emit → produce); add -cpuprofile by hand
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

fuzz: ## each fuzz target for a short while
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 10s $$pkg || exit 1; \
	  done; \
	done

lint:
	bash .ci/tracked-files.sh
	bash .ci/layout.sh
	bash .ci/comments.sh
	gofmt -l $$(git ls-files '*.go') | tee /dev/stderr | (! read)
	$(GO) vet ./...

FUNCTIONS := connection-test row-skipped backfill

build-functions: ## Lambda bootstrap binaries (provided.al2023, arm64) in bin/functions/<name>/
	@for f in $(FUNCTIONS); do \
	  echo "bin/functions/$$f/bootstrap" >&2; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath \
	    -o bin/functions/$$f/bootstrap ./functions/$$f || exit 1; \
	done

# cdk.json's app: the functions, then the CDK app as bin/cdk-app, run by
# the cdk CLI from the repository root (so its relative cdk.out is ours).
cdk-app: build-functions
	$(GO) build -C infra -o ../bin/cdk-app .

$(CDK):
	bash integration/services/cdk.sh

synth: $(CDK) ## the CloudFormation templates in cdk.out/, by the pinned cdk CLI (offline, no AWS account); add context with CDK_CONTEXT='-c …'
	rm -rf cdk.out
	$(CDK_OFFLINE) $(CDK) synth --quiet $(CDK_CONTEXT)

$(CFN_LINT):
	python3 -m venv .services/cfn-lint-$(CFN_LINT_VERSION)
	.services/cfn-lint-$(CFN_LINT_VERSION)/bin/pip install -q --disable-pip-version-check 'cfn-lint==$(CFN_LINT_VERSION)'

cfn-lint: synth $(CFN_LINT) ## cfn-lint on every template `make synth` writes to cdk.out/
	$(CFN_LINT) cdk.out/*.template.json

clean:
	rm -rf bin cdk.out
