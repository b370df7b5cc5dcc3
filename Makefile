# Rds lambda controller: Metacontroller hooks that run OTC RDS instances as Kubernetes objects.
# `make help` lists the targets.

SHELL       := bash
GO          ?= go
BIN         ?= bin
# VERSION is what --version prints and the image's tag; manifests/kustomization.yaml deploys the
# same default tag (images: newTag). Release: make docker-build docker-push VERSION=v1.2.3.
VERSION     ?= dev
IMAGE_REPO  ?= ghcr.io/mcsps/rds-lambda-controller
IMAGE       ?= $(IMAGE_REPO):$(VERSION)
CONTAINER   ?= docker
LDFLAGS     := -X github.com/mcsps/rds-lambda-controller/internal/version.Version=$(VERSION)
LISTEN      ?= 127.0.0.1:8080
KUBECTL     ?= kubectl
SCALE_N     ?= 100,1000,10000

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-14s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@printf '\nNow (override with make VAR=value): VERSION=%s IMAGE=%s CONTAINER=%s BIN=%s\n' \
		'$(VERSION)' '$(IMAGE)' '$(CONTAINER)' '$(BIN)'

.PHONY: build
build: ## Build static rds-hooks, rds-logs, otcsim and rds-hooks-secrets into $(BIN)/, stamped with $(VERSION).
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

.PHONY: version
version: ## Print $(VERSION), the version and image tag builds get.
	@echo $(VERSION)

.PHONY: run
run: ## Run rds-hooks on $(LISTEN) (plain HTTP, no authentication: a laptop only) against the embedded OTC simulator (DB=HOST:PORT: a real MySQL/MariaDB behind every instance; DB="HOST:PORT engine:PostgreSQL=HOST:PORT": a PostgreSQL behind the PostgreSQL ones).
	$(GO) run ./cmd/rds-hooks --cloud sim --insecure-no-auth --listen $(LISTEN)$(foreach d,$(DB), --sim-endpoint $(d))

.PHONY: hook-secrets
hook-secrets: ## Print new Secrets rds-hooks-tls and rds-hooks-token (make hook-secrets | kubectl create -f -; docs/tenancy.md).
	@$(GO) run ./cmd/rds-hooks-secrets

.PHONY: sim
sim: ## Run the OTC API simulator alone on 127.0.0.1:8790 (prints the OS_* exports).
	$(GO) run ./cmd/otcsim

.PHONY: test
test: ## Run all tests (starts a throwaway MariaDB and PostgreSQL and builds and runs the image with podman, installing them if missing).
	bash test/run.sh

.PHONY: image-test
image-test: ## Build the image's layout offline and run it with podman as in a pod (test/image.sh).
	bash test/image.sh

.PHONY: test-short
test-short: ## Run the tests that need no MariaDB or PostgreSQL (and not the image test).
	$(GO) test -short ./...

.PHONY: bench
bench: ## Run the benchmarks.
	$(GO) test -run '^$$' -bench . -benchmem ./...

.PHONY: bench-scale
bench-scale: ## Run the fleet benchmark (SCALE_N Rds objects in steady state, default 100,1000,10000; SCALE_ROUNDS rounds, default 9); prints a table.
	SCALE_N=$(SCALE_N) $(GO) test ./test/scale -run '^TestScale$$' -count=1 -v -timeout 30m

.PHONY: lint
lint: vet ## Check formatting and vet the code.
	@out="$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: vet
vet: ## go vet ./...
	$(GO) vet ./...

.PHONY: docker-build
docker-build: ## Build the image $(IMAGE) from the Dockerfile (CONTAINER=podman for podman).
	$(CONTAINER) build --build-arg VERSION=$(VERSION) -t $(IMAGE) .

.PHONY: docker-push
docker-push: ## Push the image $(IMAGE) (log in to the registry first).
	$(CONTAINER) push $(IMAGE)

.PHONY: deploy
deploy: ## Apply the CRD, the hooks and the CompositeController with kubectl (Metacontroller first).
	$(KUBECTL) apply -k manifests/

.PHONY: samples
samples: ## Apply the sample Rds objects.
	$(KUBECTL) apply -k manifests/samples/

.PHONY: clean
clean: ## Remove build output.
	rm -rf $(BIN)
