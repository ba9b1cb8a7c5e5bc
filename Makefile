# Torii: `make run` runs Torii (daemon + a managed browser an agent can drive);
# `make test` runs every test. Both work on a fresh machine: `make setup`
# checks Go and Node.js and installs Debian's chromium when no browser is found.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO      ?= go
NPM     ?= npm
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT  ?= $(shell git rev-parse --short HEAD 2>/dev/null)
VERPKG  := github.com/torii-browser/torii/internal/version
LDFLAGS ?= -s -w -X $(VERPKG).Version=$(VERSION) -X $(VERPKG).Commit=$(COMMIT)

EXT_DEPS := extension/node_modules/.package-lock.json
E2E_DEPS := e2e/node_modules/.package-lock.json
BENCH_DEPS := bench/node_modules/.package-lock.json

.PHONY: all build setup extension torii test vet gotest ext-test e2e run clean bench bench-smoke bench-tools bench-load

all: build

setup:
	@scripts/setup

# npm ci only when node_modules is missing or older than the lockfile.
$(EXT_DEPS): extension/package-lock.json extension/package.json
	$(NPM) --prefix extension ci --no-audit --no-fund
	@touch $@

$(E2E_DEPS): e2e/package-lock.json e2e/package.json
	$(NPM) --prefix e2e ci --no-audit --no-fund
	@touch $@

$(BENCH_DEPS): bench/package-lock.json bench/package.json
	$(NPM) --prefix bench ci --no-audit --no-fund
	@touch $@

# The Go binary embeds extension/dist, so the extension is built first.
extension: $(EXT_DEPS)
	$(NPM) --prefix extension run build

torii: extension
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/torii ./cmd/torii

build: torii

vet: extension
	$(GO) vet ./...

gotest: extension
	$(GO) test ./...

ext-test: $(EXT_DEPS)
	$(NPM) --prefix extension run typecheck
	$(NPM) --prefix extension test
	$(NPM) --prefix extension run test:page
	$(NPM) --prefix extension run docs:check

e2e: build $(E2E_DEPS)
	$(NPM) --prefix e2e run typecheck
	$(NPM) --prefix e2e test

test: setup build
	$(MAKE) --no-print-directory vet gotest ext-test e2e bench-smoke

# The main job: the daemon plus a managed browser paired with it.
# `make run RUN_ARGS=--foreground` stays attached until Ctrl-C.
run: setup build
	@scripts/run $(RUN_ARGS)

clean:
	rm -rf bin e2e/node_modules/.vite
	find extension/dist -mindepth 1 ! -name .gitkeep -delete 2>/dev/null || true

# Side by side with Playwright MCP and Chrome DevTools MCP (bench/): writes BENCHMARKS.md.
# Not part of `make test`; `make bench BENCH_ARGS="--reps 5"` for a shorter run.
bench: build $(BENCH_DEPS)
	$(NPM) --prefix bench run typecheck
	$(NPM) --prefix bench run bench -- $(BENCH_ARGS)

# One repetition on the smallest page, all three servers; fails if any cannot be driven (CI).
bench-smoke: build $(BENCH_DEPS)
	$(NPM) --prefix bench run smoke

# Issue 3's speed bench on table.html (100 / 1,000 / 10,000 rows) through the real MCP path:
# snapshot, click+observe, no-op round trip, tools/list size vs the targets. Not part of `make test`
# (one repetition alone takes ~40 s). `make bench-tools BENCH_REPS=5`; BENCH_STRICT=1 fails on a miss.
BENCH_REPS ?= 20
bench-tools: build $(E2E_DEPS)
	BENCH_REPS=$(BENCH_REPS) $(NPM) --prefix e2e run bench

# Issue 5's load bench: 8 concurrent `torii mcp` sessions x 200 mixed calls (snapshot, click, fill,
# read_text), each on its own tab, in one real Chromium: throughput, latency, queue waits, daemon
# RSS, misrouted/lost responses, fairness; writes bench/results/load.json. Not part of `make test`.
# `make bench-load LOAD_CALLS=50` for a shorter run.
LOAD_SESSIONS ?= 8
LOAD_CALLS ?= 200
bench-load: build $(E2E_DEPS)
	LOAD_SESSIONS=$(LOAD_SESSIONS) LOAD_CALLS=$(LOAD_CALLS) $(NPM) --prefix e2e exec -- vitest run --config load/vitest.config.ts
