# Custody — two commands do everything on a fresh machine:
#   make run    the local all-in-one server (seeded, prints a key and a client config)
#   make test   every test, on real engines
SHELL := /bin/bash
GO    ?= go

.PHONY: run test test-go vet bench clean

run:
	$(GO) run ./scripts/dev

test: vet test-go

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

test-go:
	$(GO) test -race -count=1 ./...

bench:
	./scripts/bench/run.sh

clean:
	rm -rf bin .aws-sam
