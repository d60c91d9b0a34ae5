# The two commands a newcomer needs are `make example` and `make test` (see README.md).
GO      ?= go
BIN     := bin/agentcanvas
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X main.version=$(VERSION)

.PHONY: build test test-go lint-workflows test-extension test-deps node24 agent-clis example example-state bench fuzz package vsix clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./sidecar/cmd/agentcanvas

# Every test: Go (unit, integration, differential against git, fuzz seed corpora), then the
# extension's (type check, unit, the canvas in Chromium, end to end in a real VS Code).
test: build test-go test-extension

# The real-CLI tests fail (not skip) under make when the CLIs are missing. Node 24 (.cache/) is
# what the first run's sample is tested on, besides the machine's Node.
test-go: lint-workflows agent-clis node24
	$(GO) vet ./...
	AGENTCANVAS_REAL_CLIS=required $(GO) test -count=1 -timeout 30m ./...

# Claude Code, Codex and Gemini CLI (package.json devDependencies) for the Go tests that run
# them against scripted model servers on 127.0.0.1.
agent-clis: node_modules/.package-lock.json
	./scripts/setup-agent-clis.sh

# The GitHub Actions workflow of docs/ci.md, through actionlint (pinned in go.mod as a Go tool;
# built on first use, about a minute).
lint-workflows:
	$(GO) tool actionlint docs/ci/github-actions.yml

node_modules/.package-lock.json: package-lock.json
	npm ci --no-audit --no-fund

node24:
	@bash scripts/setup-e2e.sh node24

# What the browser and end-to-end tests need (Debian's chromium, Node 24, code-server under
# .cache/), installed on first use: about 5 minutes once, then a no-op.
test-deps:
	@bash scripts/setup-e2e.sh

test-extension: node_modules/.package-lock.json test-deps
	npm test

# The main job: an example flow, end to end, with no API keys.
example: build
	./scripts/example.sh

# Regenerate .agentcanvas-example/ from a real dry run of an example flow.
example-state: build
	./scripts/example-state.sh

# Benchmarks against their baselines (git, cp -a, bufio.Scanner, process start…), as ratios.
bench: build
	./scripts/bench.sh

# Short fuzzing runs of every fuzz target (FUZZTIME per target).
FUZZTIME ?= 10s
fuzz:
	@for pkg in $$($(GO) list ./sidecar/...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

# One .vsix per platform, each with its cross-compiled sidecar.
# Every platform's VSIX (out/vsix/agentcanvas-<target>.vsix); TARGETS=linux-x64 builds just one.
package: node_modules/.package-lock.json
	TARGETS="$(TARGETS)" npm run package

# The VSIX of this machine's platform only (a first install: docs/first-run.md).
HOST_TARGET := $(shell scripts/host-target.sh)
vsix: node_modules/.package-lock.json
	TARGETS="$(HOST_TARGET)" npm run package

clean:
	rm -rf bin out test-results
