# Rds lambda controller: Metacontroller hooks that run OTC RDS instances as Kubernetes objects.
# `make help` lists the targets.

SHELL       := bash
GO          ?= go
BIN         ?= bin
IMAGE       ?= ghcr.io/mcsps/rds-lambda-controller:dev
LISTEN      ?= 127.0.0.1:8080
KUBECTL     ?= kubectl
SCALE_N     ?= 100,1000,10000

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: build
build: ## Build rds-hooks, rds-logs and otcsim into ./bin.
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN)/ ./cmd/...

.PHONY: run
run: ## Run rds-hooks on $(LISTEN) against the embedded OTC simulator.
	$(GO) run ./cmd/rds-hooks --cloud sim --listen $(LISTEN)

.PHONY: sim
sim: ## Run the OTC API simulator alone on 127.0.0.1:8790 (prints the OS_* exports).
	$(GO) run ./cmd/otcsim

.PHONY: test
test: ## Run all tests (starts a throwaway MariaDB, installing it if missing).
	bash test/run.sh

.PHONY: test-short
test-short: ## Run the tests that need no MariaDB.
	$(GO) test -short ./...

.PHONY: bench
bench: ## Run the benchmarks.
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: bench-scale
bench-scale: ## Run the fleet benchmark (SCALE_N Rds objects in steady state, default 100,1000,10000); prints a table.
	SCALE_N=$(SCALE_N) $(GO) test ./test/scale -run '^TestScale$$' -count=1 -v -timeout 30m

.PHONY: lint
lint: vet ## Check formatting and vet the code.
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet ./...
	$(GO) vet ./...

.PHONY: docker-build
docker-build: ## Build the container image $(IMAGE) (needs a Docker engine).
	docker build -t $(IMAGE) .

.PHONY: deploy
deploy: ## Apply the CRD, the hooks and the CompositeController with kubectl (Metacontroller first).
	$(KUBECTL) apply -k manifests/

.PHONY: samples
samples: ## Apply the sample Rds objects.
	$(KUBECTL) apply -k manifests/samples/

.PHONY: clean
clean: ## Remove build output.
	rm -rf $(BIN)
