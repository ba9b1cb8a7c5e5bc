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

.PHONY: all build setup extension torii dist test vet gotest helm-check ext-test e2e run clean bench bench-smoke bench-tools bench-load fuzz bench-abuse bench-team

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

$(BENCH_DEPS): bench/package-lock.json bench/package.json bench/.npmrc
	$(NPM) --prefix bench ci --no-audit --no-fund
	@touch $@

# The Go binary embeds extension/dist, so the extension is built first.
extension: $(EXT_DEPS)
	$(NPM) --prefix extension run build

torii: extension
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/torii ./cmd/torii

build: torii

# The npm packages (scripts/dist): @torii-browser/torii and one package per platform holding
# the binary, packed into DIST_DIR (dist/). DIST_PLATFORMS=host builds only this machine's.
dist: extension
	VERSION='$(VERSION)' COMMIT='$(COMMIT)' LDFLAGS='$(LDFLAGS)' scripts/dist

vet: extension
	$(GO) vet ./...

gotest: extension
	$(GO) test ./...

# The team gateway's Helm chart (deploy/helm/torii): `helm lint` and `helm template` through
# Helm's Go module, in a module of its own (deploy/helmcheck) so the torii binary does not
# depend on Helm; no helm binary and no chart download.
helm-check:
	cd deploy/helmcheck && $(GO) test ./...

ext-test: $(EXT_DEPS)
	$(NPM) --prefix extension run typecheck
	$(NPM) --prefix extension run cycles
	$(NPM) --prefix extension run deadcode
	$(NPM) --prefix extension test
	$(NPM) --prefix extension run test:page
	$(NPM) --prefix extension run docs:check

e2e: build $(E2E_DEPS)
	$(NPM) --prefix e2e run typecheck
	$(NPM) --prefix e2e test

# In CI (CI=1, .ci/run) the Go fuzz targets also run for FUZZTIME each; elsewhere `go test`
# runs only their seed corpora.
test: setup build
	$(MAKE) --no-print-directory vet gotest helm-check $(if $(CI),fuzz) ext-test e2e bench-smoke

# Go native fuzz targets, each run for FUZZTIME (seeds: testdata/vectors.json and
# testdata/fuzz/<target>/). A failing input is written by go under the package's
# testdata/fuzz/<target>/; move it to testdata/fuzz/<target>/ once fixed.
# The launch policy's allowlist patterns are fuzzed here (FuzzLaunchPattern); the extension's own
# pattern parser is TypeScript.
FUZZTIME ?= 30s
# The link target runs over real sockets, so its coverage is noisy; short
# minimisation keeps the time on fuzzing rather than shrinking inputs.
FUZZMINIMIZE ?= 10x
FUZZ_TARGETS := internal/wire:FuzzDecode internal/link:FuzzHandshakeFrames \
	internal/pairing:FuzzTranscripts internal/control:FuzzControlStream \
	internal/cli:FuzzLaunchPattern
# Go's fuzzing coordinator (before Go 1.27) can fail a run with "context deadline exceeded" at
# the -fuzztime deadline when a starved worker is still mid-input; it then writes no failing
# input. Such a run is repeated once; a run that wrote a failing input fails at once.
fuzz: extension
	@inputs() { if [ -d "$$1" ]; then find "$$1" -type f | wc -l; else echo 0; fi; }; \
	for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; fn=$${t##*:}; dir=$$pkg/testdata/fuzz/$$fn; \
	  echo "fuzz $$fn ($$pkg) for $(FUZZTIME)"; \
	  before=$$(inputs $$dir); \
	  $(GO) test ./$$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) && continue; \
	  if [ "$$(inputs $$dir)" != "$$before" ]; then echo "fuzz $$fn: a failing input was written to $$dir"; exit 1; fi; \
	  echo "fuzz $$fn: failed without a failing input (the coordinator's deadline race); once more"; \
	  $(GO) test ./$$pkg -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) || exit 1; \
	done

# The daemon under abuse: floods against a running daemon with a fake extension
# (internal/abusebench), each flood in a process of its own, printing the legitimate
# client's p50/p99, the CPU of daemon and flooder, fds and RSS, and reconnect times.
# Not part of `make test`. `make bench-abuse ABUSE_SECONDS=5 ABUSE_ROUNDS=1` for a shorter run
# (the second round shows whether what the floods leave behind accumulates);
# `make bench-abuse ABUSE_PROFILE=DIR` runs a daemon built with its pprof listener
# (-tags toriipprof) and writes its CPU profile during each flood and its heap after it to DIR.
ABUSE_SECONDS ?= 10
ABUSE_ROUNDS ?= 2
ABUSE_PROFILE ?=
bench-abuse: torii
	$(if $(ABUSE_PROFILE),$(GO) build -tags toriipprof -o bin/torii-pprof ./cmd/torii &&) \
	$(GO) build -o bin/torii-abuse-bench ./cmd/torii-abuse-bench && \
	ABUSE_SECONDS=$(ABUSE_SECONDS) ABUSE_ROUNDS=$(ABUSE_ROUNDS) ABUSE_PROFILE=$(ABUSE_PROFILE) $(if $(ABUSE_PROFILE),TORII_BIN=bin/torii-pprof) bin/torii-abuse-bench

# Team mode under load (internal/teambench): PostgreSQL, nats-server and three `torii serve --team`
# replicas on loopback; 1,000 simulated browsers (a Go fake extension: real pairing by one-time
# secret, a signed challenge on every connection) and 200 agents (go-sdk Streamable HTTP, user
# tokens) calling tools through any replica, interleaved with the same calls through a one-machine
# `torii serve`. Prints the latency routing adds (p50/p95), calls/s, memory per connected browser,
# lost and misrouted calls; writes bench/results/team.md. Not part of `make test`.
# `make bench-team TEAM_BENCH_ARGS=--quick` for 50 browsers, 10 agents, 10 s.
TEAM_BENCH_ARGS ?=
bench-team: torii
	$(GO) build -o bin/torii-team-bench ./cmd/torii-team-bench && \
	bin/torii-team-bench --out bench/results/team.md $(TEAM_BENCH_ARGS)

# The main job: the daemon plus a managed browser paired with it.
# `make run RUN_ARGS=--foreground` stays attached until Ctrl-C.
run: setup build
	@scripts/run $(RUN_ARGS)

clean:
	rm -rf bin e2e/node_modules/.vite
	find extension/dist -mindepth 1 ! -name .gitkeep -delete 2>/dev/null || true

# Side by side with Playwright MCP, Chrome DevTools MCP and agent-browser (bench/): writes BENCHMARKS.md.
# Not part of `make test`; `make bench BENCH_ARGS="--reps 5"` for a shorter run;
# `make bench TORII_BEFORE_BIN=path/to/older/torii` measures that build too, for a before/after.
bench: build $(BENCH_DEPS)
	$(NPM) --prefix bench run typecheck
	$(NPM) --prefix bench run bench -- $(BENCH_ARGS)

# One repetition on the smallest page, all three servers; fails if any cannot be driven (CI).
bench-smoke: build $(BENCH_DEPS)
	$(NPM) --prefix bench run smoke

# The tools speed bench on table.html (100 / 1,000 / 10,000 rows) through the real MCP path:
# snapshot, click+observe, no-op round trip, tools/list size vs the targets. Not part of `make test`
# (one repetition alone takes ~40 s). `make bench-tools BENCH_REPS=5`; BENCH_STRICT=1 fails on a miss.
BENCH_REPS ?= 20
bench-tools: build $(E2E_DEPS)
	BENCH_REPS=$(BENCH_REPS) $(NPM) --prefix e2e run bench

# The load bench: 8 concurrent `torii mcp` sessions x 200 mixed calls (snapshot, click, fill,
# read_text), each on its own tab, in one real Chromium: throughput, latency, queue waits, daemon
# RSS, misrouted/lost responses, fairness; writes bench/results/load.json. Not part of `make test`.
# `make bench-load LOAD_CALLS=50` for a shorter run.
LOAD_SESSIONS ?= 8
LOAD_CALLS ?= 200
bench-load: build $(E2E_DEPS)
	LOAD_SESSIONS=$(LOAD_SESSIONS) LOAD_CALLS=$(LOAD_CALLS) $(NPM) --prefix e2e exec -- vitest run --config load/vitest.config.ts
