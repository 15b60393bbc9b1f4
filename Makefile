# The one entry point for people and CI. See README.md.
SHELL := /bin/bash
GO ?= go
export GOFLAGS := -buildvcs=false

.PHONY: build test unit integration demo services-up services-down bench lint fuzz clean

build: ## bin/tributary
	$(GO) build -trimpath -o bin/tributary ./cmd/tributary

test: services-up ## unit + integration tests on real services
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...

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

bench: services-up
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

clean:
	rm -rf bin cdk.out
