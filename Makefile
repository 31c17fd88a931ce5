# Drover's everyday tasks. `make dev` runs a local agent with an example
# job; `make test` is what CI runs.

GO  ?= go
BIN := bin/drover
# How long `make fuzz` runs each fuzz target; `make test` runs each for 5s.
FUZZTIME ?= 30s
# The small binary that runs task shims; the agent uses it when it lies
# beside drover (docs/decisions.md).
SHIM_BIN := bin/drover-shim

# go-nvml (the nvidia device plugin) declares NVML functions deprecated;
# silence gcc's warnings about them so they do not bury test output.
export CGO_CFLAGS ?= -O2 -g -Wno-deprecated-declarations

.PHONY: build dev test fuzz lint clean nomad-api-test

## build: compile the drover binary and the drover-shim binary beside it into bin/
build:
	$(GO) build -o $(BIN) ./cmd/drover
	$(GO) build -o $(SHIM_BIN) ./cmd/drover-shim

## dev: build, start `drover agent -dev`, run examples/hello.nomad.hcl, keep the agent running until Ctrl-C
dev: build
	./scripts/dev.sh

## test: vet and run every test with the race detector (end-to-end tests included, beside the others: scripts/test.sh), then every fuzz target for 5s (under 2 minutes)
test:
	$(GO) vet ./... && GO=$(GO) ./scripts/test.sh && FUZZTIME=5s GO=$(GO) ./scripts/fuzz.sh

## fuzz: run every fuzz target (func FuzzXxx) for FUZZTIME each (default 30s)
fuzz:
	FUZZTIME=$(FUZZTIME) GO=$(GO) ./scripts/fuzz.sh

## nomad-api-test: run Nomad's Go API module test suite (core tests) against drover as `nomad` (NOMAD_API_TESTS=regexp to choose; docs/compatibility.md)
nomad-api-test:
	GO=$(GO) ./scripts/nomad-api-tests.sh

## lint: check formatting (gofmt) and vet
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

## clean: remove build outputs and the dev agent's data
clean:
	rm -rf bin dev-data
