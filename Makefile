# Custody — two commands do everything on a fresh machine:
#   make run    the local all-in-one server (seeded, prints a key and a client config)
#   make test   every test, on real engines
SHELL := /bin/bash
GO    ?= go

.PHONY: run test test-go vet fuzz conformance bench clean tools-rie tools-clamav build-McpFunction build-WorkerFunction build-SweeperFunction build-ScanGateFunction

# make run ARGS="-addr 127.0.0.1:18080 -data /tmp/custody-2" passes flags on.
# The server is built first and run as itself (not under go run), so Ctrl-C
# stops it cleanly; make then reports the interrupt (exit 130).
# With STORE_ENGINE=dynamodb the server is built with the DynamoDB engine
# (-tags dynamodb); the file engine's build links no AWS SDK.
run:
	$(GO) build $(if $(filter dynamodb,$(STORE_ENGINE)),-tags dynamodb) -o bin/custody-dev ./scripts/dev
	exec ./bin/custody-dev $(ARGS)

test: tools-rie tools-clamav vet test-go fuzz conformance

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) vet -tags dynamodb ./scripts/dev   # the dev server's DynamoDB engine (scripts/dev/dynamodb.go)
	cd scripts/bench && GOWORK=off $(GO) vet ./...   # its own module: ./... above stops at its go.mod

test-go:
	$(GO) test -race -count=1 ./...
	cd scripts/bench && GOWORK=off $(GO) test -count=1 .   # its own module: the cost model's arithmetic

# Fuzz targets of the parsers that face untrusted input, each run for
# FUZZTIME. Crashers found land in the package's testdata/fuzz and are then
# replayed by every `go test` as seeds: commit them.
FUZZTIME ?= 10s
FUZZ_TARGETS := \
	shared/mcp:FuzzDecodeBody \
	shared/mcp:FuzzEraDetectionAndChecks \
	shared/mcp:FuzzCursorOpen \
	shared/mcp:FuzzRequestStateOpen \
	shared/store/filestore:FuzzDecodeItem \
	shared/auth/oauth:FuzzVerifyToken \
	shared/intake/extract:FuzzTextPages \
	shared/intake/extract:FuzzPDFText

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; \
	  echo "fuzz $$fn ($$pkg, $(FUZZTIME))"; \
	  out=$$($(GO) test ./$$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) 2>&1) || { echo "$$out"; exit 1; }; \
	  echo "$$out" | grep -E '^(fuzz: elapsed: [0-9]+s, execs|ok)' | tail -2; \
	done

# The official MCP conformance suite (0.1.16; 0.2.0-alpha.12 with
# --requirements 2025-11-25 and with --requirements 2026-07-28) and the
# TypeScript SDK interop test, against the dev server's loopback fixture
# profile. Any failing scenario fails the target, scored or not (the runner reads
# each scenario's line); no baseline is used. Node 22 and the npm packages are
# installed into .tools/ on first use by shared/nodetest (the machine's npm is
# the installer; lockfiles in scripts/conformance/npm and scripts/interop/ts pin
# them). The same installer puts fauxqs, the SQS emulator of the SQS engine's
# tests, there (lockfile in shared/queue/sqsqueue/fauxqstest/npm), and the
# TypeScript v2 client with ext-tasks of shared/tasks' interop test
# (lockfile in scripts/interop/ts-tasks).
conformance:
	$(GO) run ./scripts/conformance

# Tools the tests run, installed with the Go toolchain into the git-ignored
# .tools/bin. Each install leaves a stamp named after the pinned version, so
# it runs once per version and does nothing (offline included) afterwards.
TOOLS_BIN   := $(CURDIR)/.tools/bin
# The AWS Lambda Runtime Interface Emulator (functions/mcp's runtime tests);
# no tag is served, so the pseudo-version is pinned (docs/decisions.md "Versions").
RIE_VERSION := v0.0.0-20261030222936-bef5c4ba774d
RIE         := $(TOOLS_BIN)/aws-lambda-rie
RIE_STAMP   := $(TOOLS_BIN)/.aws-lambda-rie@$(RIE_VERSION)

# Offline, a module already in the module cache installs from the cache.
RIE_MODULE  := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@$(RIE_VERSION)

tools-rie:
	@if [ -x $(RIE) ] && [ -f $(RIE_STAMP) ]; then :; else \
	  set -x && mkdir -p $(TOOLS_BIN) && rm -f $(TOOLS_BIN)/.aws-lambda-rie@* && \
	  { GOBIN=$(TOOLS_BIN) $(GO) install $(RIE_MODULE) || \
	    GOBIN=$(TOOLS_BIN) GOPROXY=file://$$($(GO) env GOMODCACHE)/cache/download $(GO) install $(RIE_MODULE); } && \
	  touch $(RIE_STAMP); fi

# Debian's clamav-daemon 1.4.x for the clamd engine's and the scan gate's
# tests (shared/scan/clamdtest starts its own clamd; nothing of the
# package's services or signatures is used). Installed as root (CI); a
# non-root run without it prints why, and those tests skip locally (they
# fail when CI=true).
tools-clamav:
	@bash scripts/ci/install-clamav.sh || { test "$$CI" != true && echo "tools-clamav: clamd is not installed; its tests will skip (run scripts/ci/install-clamav.sh as root)"; }

# Lambda builds, called by `sam build` (template.yaml: Metadata BuildMethod
# makefile) with ARTIFACTS_DIR set; by hand they write to bin/<Function>
# (expanded in each recipe: build-WorkerFunction writes bin/WorkerFunction).
ARTIFACTS_DIR ?= $(CURDIR)/bin/$(patsubst build-%,%,$@)

# Stripped (-s -w: no symbol table, no DWARF; panics still print their
# stack): Lambda downloads and maps the binary at every cold start.
build-McpFunction:
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/mcp

# The task worker (the task queue's event source mapping) and the sweeper
# (every minute), built as McpFunction is.
build-WorkerFunction:
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/worker

build-SweeperFunction:
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/sweeper

# The scan gate (GuardDuty's scan results; intake's PDF engine, issue 18).
build-ScanGateFunction:
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' -o $(ARTIFACTS_DIR)/bootstrap ./functions/scangate

bench:
	./scripts/bench/run.sh

clean:
	rm -rf bin .aws-sam

# Lints template.yaml with cfn-lint (CloudFormation schema and the SAM
# transform) where it is installed; not part of `make test`, since no
# registry the project installs from serves it.
.PHONY: lint-template
lint-template:
	cfn-lint -t template.yaml infra/operations.yaml
