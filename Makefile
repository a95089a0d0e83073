# netbench: `make run` builds what it needs and runs the main job;
# `make test` runs every test. Both work on a fresh machine of the project's
# kind (Debian with Rust, Go, Java, Node.js and Python installed).

CARGO ?= cargo
# apt-get needs root; sudo when not root.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
RELEASE := target/release
NETBENCH := $(RELEASE)/netbench
TESTSERVER := $(RELEASE)/netbench-testserver

# The suite `make run` runs: `make run SUITE=quick` for a 2-minute smoke run.
SUITE ?= standard
# The run `make screenshot` pictures: `make screenshot RUN=3`; the latest if empty.
RUN ?=
# One section of the report alone (its top 1,400 pixels), to docs/<SECTION>.png:
# `make screenshot RUN=4 SECTION=allocators` (or models).
SECTION ?=
# What `make load-demo` sends: `make load-demo LOAD_ARGS="-c 1000 -d 10s"`.
LOAD_ARGS ?= -c 100 -d 5s --warmup 1s --expect-status 200 --expect-content-type text/plain --expect-body OK

.PHONY: all build netbench run load-demo test test-deps server-deps screenshot site lint bench clean

all: build

build:
	$(CARGO) build --release --locked --workspace

# The netbench binary alone, which is all `make run`, `bench` and `screenshot`
# use: the workspace's test servers (crates/testkit, hyper) add about two
# minutes to a first release build here.
netbench:
	$(CARGO) build --release --locked -p netbench

# The main job: build every server, verify each, run the suite's whole matrix,
# store every number in results/netbench.sqlite, print the table, then write
# the run's HTML report (results/run-<id>/report.html) and print its path. A
# run that stopped early (Ctrl-C: exit 130) gets no report; `netbench report`
# writes one at any time. While netbench's release build runs (one CPU busy
# for much of it), scripts/prefetch.py fills the Go, cargo and Maven caches for
# the servers' builds at the lowest priority: on a machine whose caches are
# empty that moves minutes of downloads off the run's critical path.
run: server-deps
	@mkdir -p target; \
	echo "fetching the servers' dependencies beside netbench's build (log: target/prefetch.log)"; \
	python3 scripts/prefetch.py >target/prefetch.log 2>&1 & pf=$$!; \
	$(MAKE) --no-print-directory netbench || { kill $$pf 2>/dev/null; wait $$pf; exit 2; }; \
	wait $$pf; tail -n 1 target/prefetch.log; \
	st=0; $(NETBENCH) run $(SUITE) || st=$$?; \
	if [ $$st -le 1 ]; then $(NETBENCH) report || st=2; fi; \
	exit $$st

# A short load against a local test server that this target starts (and
# always stops), pinned to disjoint CPUs when the machine has two or more.
load-demo: build
	@set -e; \
	log=$$(mktemp); \
	if [ "$$(nproc)" -ge 2 ]; then srv="taskset -c 0"; cli="taskset -c 1"; else srv=""; cli=""; fi; \
	$$srv $(TESTSERVER) --listen 127.0.0.1:0 --threads 1 >$$log & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; rm -f $$log' EXIT INT TERM; \
	for i in $$(seq 100); do grep -q listening $$log && break; sleep 0.05; done; \
	url=$$(sed -n 's/^listening on //p' $$log); \
	[ -n "$$url" ] || { echo "netbench-testserver did not start" >&2; exit 2; }; \
	echo "server: netbench-testserver (hyper, 1 thread) at $$url"; \
	$$cli $(NETBENCH) load $(LOAD_ARGS) $$url

# The engine's tests run twice: on epoll (with everything else) and on
# io_uring, where the kernel allows it (it says why not and skips otherwise).
# Everything the tests (and the servers, JVMs and browser they start) put in
# the temporary folder goes to one folder per clone, emptied when `make test`
# starts and removed when it passes: a test that leaks a folder cannot fill
# the disk over many runs, and a failed run keeps its files to look at.
TEST_TMP := /tmp/netbench-tests-$(shell printf %s "$(CURDIR)" | cksum | cut -d' ' -f1)
test: export TMPDIR := $(TEST_TMP)
test: test-tmp test-deps server-deps deploy-check
	$(CARGO) build --locked --workspace --all-targets
	$(CARGO) test --locked --workspace
	cd scripts && python3 -m unittest -q test_prefetch test_check_docs
	python3 scripts/check_docs.py
	python3 bench/jvm_warm.py --check >/dev/null
	@why=$$($(CARGO) run --locked -q -p netbench -- load --io uring -n 1 http://127.0.0.1:1/ 2>&1 | sed -n 's/.*io_uring not used: //p'); \
	if [ -n "$$why" ]; then echo "engine tests on io_uring skipped: $$why"; \
	else NETBENCH_TEST_IO=uring $(CARGO) test --locked -p netbench-engine; fi
	@rm -rf $(TEST_TMP)

.PHONY: test-tmp
test-tmp:
	@rm -rf $(TEST_TMP) && mkdir -p $(TEST_TMP)

# The Kubernetes manifests of a distributed load (deploy/kubernetes, README
# there), checked by scripts/check_k8s.py: validated in strict mode against
# the schemas of Kubernetes $(K8S_VERSION) that the pinned kubernetes-validate
# ships (nothing is fetched while checking), cross-checked for what no schema
# sees, and each broken manifest in deploy/kubernetes/testdata rejected for its
# reason. The validator is installed by hash (deploy/requirements.txt) into a
# venv under target/, once, and again only when that file changes.
K8S_VERSION ?= 1.32
DEPLOY_VENV := target/deploy-venv
.PHONY: deploy-check
deploy-check: $(DEPLOY_VENV)/installed
	@$(DEPLOY_VENV)/bin/python scripts/check_k8s.py --kubernetes-version $(K8S_VERSION) deploy/kubernetes

$(DEPLOY_VENV)/installed: deploy/requirements.txt
	@echo "installing kubernetes-validate (deploy/requirements.txt) into $(DEPLOY_VENV)"
	@rm -rf $(DEPLOY_VENV) && python3 -m venv $(DEPLOY_VENV) || { \
	  echo "python3 -m venv failed (Debian's own python3 needs: apt-get install python3-venv)" >&2; exit 2; }
	@$(DEPLOY_VENV)/bin/pip install -q --disable-pip-version-check --require-hashes --no-deps \
	  -r deploy/requirements.txt
	@touch $@

# What the report's browser test needs beyond the machine's kind: Debian's
# Chromium and playwright-core (which drives it; it downloads no browser).
test-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the report's browser test"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq chromium >/dev/null; }
	cd crates/testkit/browser && npm ci --no-audit --no-fund --loglevel=error

# The Debian packages the servers' manifests list (C, C++, Pascal, Haskell,
# PHP, nginx), the allocators the native servers are run with, and PostgreSQL
# for the db scenarios (its package would create and start a system-wide
# cluster: told not to, as the runner starts its own): what a fresh machine
# lacks is installed, and nothing when all is there.
server-deps:
	@pk=$$(python3 scripts/server_packages.py --missing) || exit 2; \
	if [ -n "$$pk" ]; then \
	  echo "installing Debian packages the servers need:" $$pk; \
	  if echo "$$pk" | grep -qx postgresql; then \
	    $(SUDO) mkdir -p /etc/postgresql-common/createcluster.d && \
	    echo "create_main_cluster = false" | $(SUDO) tee /etc/postgresql-common/createcluster.d/netbench.conf >/dev/null; \
	  fi; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq -o DPkg::Lock::Timeout=600 $$pk >/dev/null; \
	fi

# The README's screenshots: the latest run's (or RUN=N's) HTML report opened
# in headless Chromium at 1280 px by the browser test's own checker (which
# fails on any console error, missing chart or unreadable one), a picture
# per section to docs/report-<section>.png; or one section alone, its top
# 1,400 pixels, to docs/<SECTION>.png.
screenshot: netbench test-deps
	$(NETBENCH) report $(RUN) -o results/screenshot/report.html
	@if [ -n "$(SECTION)" ]; then \
	  node crates/testkit/browser/check.mjs results/screenshot/report.html docs/$(SECTION).png --section $(SECTION) --max-height 1400 >/dev/null && \
	  echo "wrote docs/$(SECTION).png"; \
	else \
	  node crates/testkit/browser/check.mjs results/screenshot/report.html results/screenshot/page.png --max-height 1600 --sections docs >/dev/null && \
	  echo "wrote docs/report-<section>.png"; \
	fi

# The static site over the whole store (docs/site.md): the index, every
# run's report and a page per server, written to results/site from
# results/netbench.sqlite (read only), then the index's path printed. A
# second `make site` replaces the pages in place; the folder opens from disk.
SITE_DIR := results/site
site: netbench
	$(NETBENCH) site --db results/netbench.sqlite -o $(SITE_DIR)
	@echo "open $(SITE_DIR)/index.html"

# Each Rust and Go server is checked with its own formatter, found by its
# build file, so a new server folder is covered without naming it here.
lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --locked --workspace --all-targets -- -D warnings
	@for m in servers/*/Cargo.toml; do $(CARGO) fmt --manifest-path $$m -- --check || exit 1; done
	@out=$$(gofmt -l $$(dirname servers/*/go.mod)); [ -z "$$out" ] || { echo "gofmt: $$out" >&2; exit 1; }

# Fuzzing (CONTRIBUTING.md, "Fuzzing"): each cargo-fuzz target in fuzz/ for
# FUZZ_SECONDS, one after the other (FUZZ_TARGETS="parse_head work_answer" for
# some); installs cargo-fuzz if missing, works on stable Rust, and fails when a
# target finds a crash, a hang or an out-of-memory (input in fuzz/artifacts/).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
.PHONY: fuzz
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) CARGO=$(CARGO) fuzz/run.sh $(FUZZ_TARGETS)

# The client-cost tables on a pinned nginx: netbench's CPU per request beside
# wrk, ab, h2load, oha and the floor clients of bench/floor/, as ratios, then
# the same over HTTPS beside wrk and h2load, with a handshake storm, then over
# HTTP/2 (h2c and h2, 1, 10 and 100 streams) beside h2load, then gRPC calls
# beside ghz (built once from its Go module) on go-nethttp's grpc-go
# (docs/benchmark.md). The first two take about 25 minutes with the defaults,
# plus about 5 the first time (oha is built once); `make bench
# BENCH_ARGS="--check" TLS_BENCH_ARGS="--check" H2_BENCH_ARGS="--check"
# GRPC_BENCH_ARGS="--check"` is a short self-test,
# BENCH_ARGS="--clients netbench-epoll,floor-epoll" a subset.
# bench/load_vs_wrk.py is the narrower netbench-against-wrk table.
TLS_BENCH_ARGS ?=
H2_BENCH_ARGS ?=
GRPC_BENCH_ARGS ?=
bench: netbench
	python3 bench/clients.py $(BENCH_ARGS)
	python3 bench/tls_clients.py $(TLS_BENCH_ARGS)
	python3 bench/h2_clients.py $(H2_BENCH_ARGS)
	python3 bench/grpc_clients.py $(GRPC_BENCH_ARGS)

clean:
	$(CARGO) clean
