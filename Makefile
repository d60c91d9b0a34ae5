# The two commands a newcomer needs are `make example` and `make test` (see README.md).
GO      ?= go
BIN     := bin/agentcanvas
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build test test-go example bench fuzz clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./sidecar/cmd/agentcanvas

# Every test: Go (unit, integration, differential against git), then the extension's.
test: build test-go

test-go:
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# The main job: an example flow, end to end, with no API keys.
example: build
	./$(BIN) validate flows

# Benchmarks against baselines, printed as ratios.
bench: build
	./scripts/bench-proposals.sh $(BIN)

# Short fuzzing runs of every fuzz target (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./sidecar/...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin out
