# The one entry point for people and CI. See README.md.
SHELL := /bin/bash
GO ?= go
export GOFLAGS := -buildvcs=false

.PHONY: build test unit integration demo services-up services-down bench bench-micro lint fuzz clean build-functions synth cfn-lint

# cfn-lint, pinned, in a venv under the git-ignored .services/; installed
# once per version (the binary exists only after pip succeeded). `make
# test` lints the templates its CDK tests synthesize (every stack: data
# plane with and without a customer role, customer access with and
# without topic creation) instead of a second synth. Per-resource ignores
# carry their reason in infra/ (lintIgnore).
CFN_LINT_VERSION := 1.58.0
CFN_LINT := .services/cfn-lint-$(CFN_LINT_VERSION)/bin/cfn-lint
TEST_TEMPLATES := .services/cfn-templates

# `tributary version` prints these; outside a git checkout they read "dev"/"unknown".
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X main.version=$(VERSION) -X main.commit=$(COMMIT)

build: ## bin/tributary, stamped with VERSION and COMMIT
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o bin/tributary ./cmd/tributary

test: services-up $(CFN_LINT) ## unit + integration tests on real services, the CDK app's tests, cfn-lint
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...
	rm -rf $(TEST_TEMPLATES)
	cd infra && CFN_TEMPLATES_DIR=$(CURDIR)/$(TEST_TEMPLATES) $(GO) test -count=1 -timeout 15m ./...
	$(CFN_LINT) $(TEST_TEMPLATES)/*.template.json

unit: ## unit tests only (no services)
	$(GO) test -count=1 -short ./...

integration: services-up ## integration tests only
	$(GO) test -count=1 -timeout 15m ./integration/...

demo: services-up build ## a shop database streamed to Kafka, messages printed
	bash integration/demo.sh

services-up: ## install what is missing; start Kafka and PostgreSQL on 127.0.0.1
	bash integration/services/up.sh

services-down:
	bash integration/services/down.sh

# Sizes: make bench BENCH_ROWS=200000 BENCH_LATENCY_SECONDS=20 (also BENCH_RATE, BENCH_SYSTEMS,
# BENCH_SCENARIOS, BENCH_PARTITIONS, BENCH_JVM_HEAP, BENCH_KEEP; see integration/bench/main.go).
bench: services-up build ## Tributary vs Debezium side by side; table on stdout, JSON in integration/bench/results/
	bash integration/bench/debezium/build.sh
	$(GO) run ./integration/bench

bench-micro: ## hot-path micro-benchmarks (encoder, pipeline emit → produce); add -cpuprofile by hand
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

fuzz: ## each fuzz target for a short while
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime 10s $$pkg || exit 1; \
	  done; \
	done

lint:
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet ./...

FUNCTIONS := connection-test row-skipped

build-functions: ## Lambda bootstrap binaries (provided.al2023, arm64) in bin/functions/<name>/
	@for f in $(FUNCTIONS); do \
	  echo "bin/functions/$$f/bootstrap"; \
	  GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath \
	    -o bin/functions/$$f/bootstrap ./functions/$$f || exit 1; \
	done

synth: build-functions ## the CDK app's CloudFormation templates in cdk.out/ (offline, no AWS account)
	cd infra && CDK_OUTDIR=../cdk.out $(GO) run .

$(CFN_LINT):
	python3 -m venv .services/cfn-lint-$(CFN_LINT_VERSION)
	.services/cfn-lint-$(CFN_LINT_VERSION)/bin/pip install -q --disable-pip-version-check 'cfn-lint==$(CFN_LINT_VERSION)'

cfn-lint: synth $(CFN_LINT) ## cfn-lint on every template `make synth` writes to cdk.out/
	$(CFN_LINT) cdk.out/*.template.json

clean:
	rm -rf bin cdk.out
