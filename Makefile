# The two commands a fresh clone needs: `make run` (the local stack) and `make test` (everything
# CI checks). Both install what they need themselves, at the versions pinned in the repository.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test
export SAM_CLI_TELEMETRY := 0

STACK := .local/bin/stack
# GO_BUILD builds as the stack builds the functions and the emulator (gateway.BuildFlags): the
# stack built with them too shares their compiled packages (the standard library, the AWS SDK).
# FUNCTIONS and RIE are where the stack looks for the functions and what the emulator is;
# TestTheMakefileBuildsAsTheStack holds the three to infra/local/cmd/stack's.
GO_BUILD := go build -tags lambda.norpc -trimpath -ldflags='-s -w'
FUNCTIONS := .local/functions
RIE := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie
VENV := .venv
NODE_DEPS := infra/local/node_modules/.package-lock.json
PY_DEPS := $(VENV)/.installed
# RUN_DEPS are the Python tools the local stack itself runs (moto): `make run` installs only
# these, so a fresh clone serves its first request without waiting for the test tools.
RUN_DEPS := $(VENV)/.run-installed
# MCP_DEPS is the official MCP Python SDK, whose OAuth client an end-to-end test drives
# (infra/local/mcpclient): a venv of its own, as its pins are not aws-sam-cli's.
MCP_VENV := .venv-mcp
MCP_DEPS := $(MCP_VENV)/.installed
# CHROMIUM is Debian's headless browser the approval page's browser test drives.
CHROMIUM ?= /usr/bin/chromium
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: run test lint template functions clients bench load deps browser stack prebuild stack-tests fuzz

# FUZZTIME bounds each fuzz target under `make test`: a count of executions, not a duration, since
# Go 1.26's fuzz coordinator can fail a duration-bounded run with a bare "context deadline
# exceeded" when its deadline races a busy worker (go.dev/issue/75804, fixed in Go 1.27). The 22
# targets at 4,000 executions each took 406.6 s of a 1,022 s CI on a clean clone (2026-12-07), the
# most of any phase; 2,000 each keep them near 3.5 minutes and CI near 14 (8,000 once took half
# of CI); a longer hunt is `make fuzz FUZZTIME=100000x` under `stack exec`.
FUZZTIME ?= 2000x
# The fuzz targets are listed from the packages themselves (go test -list), so a new function's
# target (TestEveryFunctionIsFuzzed asks for one) is fuzzed without naming it here.
FUZZ_PACKAGES := ./pkg/token ./pkg/apigw

# MCP_CONFORMANCE are the scenarios of the official MCP conformance suite that apply to this
# server, run by `make test` against the stack's /mcp (infra/local/cmd/conformance; the checks
# that need the suite's own diagnostic tools are excused in infra/local/conformance-baseline.yml).
# Not applicable, and not run: tools-call-* and json-schema-2020-12 (they call the suite's own
# test tools), prompts-get-* and resources-read-*, -templates-read, -subscribe, -unsubscribe
# (the suite's test prompts and resources; this server has none), completion-complete (no
# completions), http-custom-header-server-validation (tools with x-mcp-header annotations),
# server-sse-* (the stateless transport answers JSON, keeps no stream), elicitation-*,
# input-required-result-* and tasks-* (server-initiated requests and tasks, which these tools
# make none of), sep-2640-skills-* (an extension this server does not carry).
MCP_CONFORMANCE := server-initialize server-session-lifecycle server-stateless ping logging-set-level \
  tools-list prompts-list resources-list caching dns-rebinding-protection http-header-validation \
  sep-2164-resource-not-found

## deps: the pinned Node.js (dynalite, playwright-core, axe-core) and Python (moto, aws-sam-cli,
## cfn-lint; the MCP SDK) tools
deps: $(NODE_DEPS) $(PY_DEPS) $(MCP_DEPS)

## browser: Debian's Chromium, for the approval page's browser test
browser: $(CHROMIUM)

$(CHROMIUM):
	$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium || { $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; }

$(NODE_DEPS): infra/local/package.json infra/local/package-lock.json
	npm ci --prefix infra/local --no-audit --no-fund

$(PY_DEPS): infra/local/requirements.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --no-compile --requirement infra/local/requirements.txt
	touch $@ $(RUN_DEPS)

# --no-compile: pip byte-compiles every module it installs (moto's thousands), which Python does
# anyway for the few it imports (measured: 78 s with, 49 s without, moto's first import 1.7 s
# slower).
$(MCP_DEPS): infra/local/requirements-mcp.txt
	python3 -m venv $(MCP_VENV)
	$(MCP_VENV)/bin/pip install --quiet --no-compile --requirement infra/local/requirements-mcp.txt
	touch $@

$(RUN_DEPS): infra/local/requirements-run.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --no-compile --requirement infra/local/requirements-run.txt
	touch $@

stack:
	$(GO_BUILD) -o $(STACK) ./infra/local/cmd/stack

## run: the whole local stack in the foreground, the API on http://127.0.0.1:3000; Ctrl-C stops it
# The tools install while the stack, the functions and the emulator build (the stack then finds
# them up to date): pip waits on the network and one core, go build takes the others.
run: export STACK_T0 := $(shell date +%s%3N)
run:
	$(MAKE) --no-print-directory -j4 $(NODE_DEPS) $(RUN_DEPS) prebuild
	STACK_FUNCTION_LOGS=stdout $(STACK) run

# prebuild builds the stack, the emulator and every function in one go build, so that the packages
# they share compile once and the two cores are never left to one link: into FUNCTIONS, where
# `stack run` builds the functions (its go build then finds them up to date), the stack and the
# emulator linked from there to where make and the stack run them (the gateway runs only the
# template's functions from FUNCTIONS).
prebuild:
	$(GO_BUILD) -o $(FUNCTIONS)/ ./infra/local/cmd/stack $(RIE) ./functions/...
	mkdir -p $(dir $(STACK))
	ln -f $(FUNCTIONS)/stack $(FUNCTIONS)/aws-lambda-rie $(dir $(STACK))

## test: lint, the template checks, then against one local stack (its scheduled functions every
## second): every unit, integration and end-to-end test, the approval page in headless Chromium,
## schemathesis with openapi.yaml, each benchmark once so none rots, and each fuzz target for
## FUZZTIME executions. Each phase prints its time. CHAOS_SEED=N replays TestChaos's workload
## of seed N (its failures name theirs).
# PHASE runs a phase of `make test` and prints its time (infra/local/phase).
PHASE := infra/local/phase
test:
	$(PHASE) deps $(MAKE) --no-print-directory deps browser
	$(PHASE) lint $(MAKE) --no-print-directory lint
	$(PHASE) template $(MAKE) --no-print-directory template
	$(PHASE) clients $(MAKE) --no-print-directory clients
	$(PHASE) stack $(MAKE) --no-print-directory stack
	STACK_SCHEDULE_PERIOD=1s $(PHASE) stack-tests $(STACK) exec -- $(MAKE) --no-print-directory stack-tests

# stack-tests runs inside `stack exec`, which provides the stores, the gateway and their env.
# The client's examples and the docs' commands (internal/docstest: every sh block of README.md
# and docs/*.md that talks to the stack, run against it; README, "The docs are tested") run
# after the host's packages, not beside them: the end-to-end suite injects faults into the whole
# stack, and a walk that met one would fail for it.
DOCS_TESTS := ./internal/docstest
stack-tests:
	$(PHASE) go-tests go test -count=1 -race $$(go list ./... | grep -v '/internal/docstest$$')
	$(PHASE) client-tests go test -count=1 -race github.com/interrupthost/interrupthost/client/...
	$(PHASE) docs-tests go test -count=1 $(DOCS_TESTS)
	ENGINE_JWT=$$(go run ./infra/local/cmd/devtoken -sub engine -tenant browser -scopes "interrupts:write runs:read") \
	  DELEGATE_JWT=$$(go run ./infra/local/cmd/devtoken -sub mailer -tenant browser -scopes "tokens:delegate") \
	  MAIL_ENGINE_JWT=$$(go run ./infra/local/cmd/devtoken -sub engine -tenant browser-mail -scopes "interrupts:write runs:read") \
	  MAIL_OPS_JWT=$$(go run ./infra/local/cmd/devtoken -sub ops -tenant browser-mail -scopes "contacts:manage subscriptions:manage tokens:delegate") \
	  SLACK_OPS_JWT=$$(go run ./infra/local/cmd/devtoken -sub ops -tenant browser-slack -scopes "interrupts:write runs:read contacts:manage subscriptions:manage integrations:manage") \
	  TEAMS_OPS_JWT=$$(go run ./infra/local/cmd/devtoken -sub ops -tenant browser-teams -scopes "interrupts:write runs:read contacts:manage subscriptions:manage integrations:manage") \
	  CONSOLE_ENGINE_JWT=$$(go run ./infra/local/cmd/devtoken -sub engine -tenant browser-console -scopes "interrupts:write runs:read contacts:manage subscriptions:manage") \
	  CONSOLE_ALICE_JWT=$$(go run ./infra/local/cmd/devtoken -sub alice -tenant browser-console -scopes "approvals:respond") \
	  CHROMIUM=$(CHROMIUM) $(PHASE) browser node --test infra/local/browser/
	$(PHASE) apicheck infra/local/apicheck.sh
	$(PHASE) mcp-conformance go run ./infra/local/cmd/conformance -scenarios "$(MCP_CONFORMANCE)"
	$(PHASE) benchmarks go test -count=1 -run '^$$' -bench . -benchtime 1x ./...
	$(PHASE) fuzz $(MAKE) --no-print-directory fuzz

## fuzz: each fuzz target for FUZZTIME executions (against the stack: run it under `stack exec` or `make test`)
fuzz:
	@for p in $(FUZZ_PACKAGES); do \
	  for t in $$(go test -list '^Fuzz' $$p | grep '^Fuzz'); do \
	    echo "fuzz $$t for $(FUZZTIME)"; \
	    go test $$p -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) >/tmp/fuzz.$$$$.log 2>&1 || { cat /tmp/fuzz.$$$$.log; exit 1; }; \
	    tail -n 1 /tmp/fuzz.$$$$.log; \
	  done; \
	done

## lint: gofmt, go.mod and go.sum tidy (the host's and the client's), go vet and staticcheck
## (pinned as a go.mod tool), and each function's links: the
## AWS clients `go list -deps` finds in its deployed build are those its role lets it call
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go mod tidy -diff
	cd client && go mod tidy -diff
	go vet ./... github.com/interrupthost/interrupthost/client/...
	go tool staticcheck ./... github.com/interrupthost/interrupthost/client/...
	go test -count=1 -run '^TestEachFunctionLinksWhatItsRoleAllows$$' ./internal/samtemplate

## template: sam validate --lint, cfn-lint on the source and on the template the pinned SAM
## translator makes of it (what CloudFormation receives: circular dependencies show only there),
## openapi.yaml checked as OpenAPI 3.1 by an independent validator, and sam build (arm64
## bootstraps under .aws-sam/, without the RPC mode that provided.al2023 never uses)
# LAMBDA_GOFLAGS are the functions' build flags beside sam's -trimpath: the tag of the provided
# runtimes, and stripped binaries (no symbol table or DWARF: a third smaller, which a cold start
# fetches and pages in; docs/deploying.md, "Deploying").
LAMBDA_GOFLAGS := -tags=lambda.norpc '-ldflags=-s -w'
# The functions are compiled once, in one go build with sam's flags (-trimpath, the tag, linux
# arm64), before sam build: its parallel builds then find every package in the build cache and
# only link (measured: 393 s of cold parallel builds, 141 + 27 s this way).
template: $(PY_DEPS)
	go run ./internal/cmd/gentemplate -check
	$(VENV)/bin/sam validate --lint
	$(VENV)/bin/cfn-lint template.yaml
	mkdir -p .local
	$(VENV)/bin/python infra/local/translate.py template.yaml > .local/translated.json
	$(VENV)/bin/cfn-lint .local/translated.json
	$(VENV)/bin/openapi-spec-validator openapi.yaml
	GOOS=linux GOARCH=arm64 GOFLAGS="$(LAMBDA_GOFLAGS)" go build -trimpath ./functions/...
	GOFLAGS="$(LAMBDA_GOFLAGS)" $(VENV)/bin/sam build

## functions: template.yaml's per-function parts (log groups, roles, functions, their routes,
## alarm queries, dashboard line) generated from functions/manifest.yaml and routes.Functions() (pkg/apigw/routes)
functions:
	go run ./internal/cmd/gentemplate

## clients: a Go client generated from openapi.yaml by each of oapi-codegen and openapi-generator
## (pinned below), built, and checked to have every operation; written under .local/clients
OAPI_CODEGEN_VERSION := v2.5.1
OAPI_RUNTIME_VERSION := v1.1.2
OPENAPI_GENERATOR_VERSION := 7.17.0
clients:
	OAPI_CODEGEN_VERSION=$(OAPI_CODEGEN_VERSION) OAPI_RUNTIME_VERSION=$(OAPI_RUNTIME_VERSION) \
	  OPENAPI_GENERATOR_VERSION=$(OPENAPI_GENERATOR_VERSION) infra/local/clients.sh

## bench: the benchmarks with their figures (fold, resume validation, round trips and request
## units per flow and on runs of 10 to 100,000 commits, CPU per iteration, each function's cold
## init under the emulator)
bench: deps stack
	BENCH_LONG_RUN=1 $(STACK) exec -- go test -count=1 -timeout 30m -run '^$$' -bench . -benchmem ./...

## load: the wait-and-resolve cycle against the running stack (`make run` in another terminal):
## cycles/s, latency per step, and CPU per cycle by process group; LOAD_FLAGS passes flags on
## (-clients 8 -duration 30s -surface run|token -race; -baseline REV -rounds N, without make run,
## starts REV's stack and this tree's in turn and prints them side by side; -long-run 20,4000,20000
## grows one run and times fresh steps at each count of commits)
load:
	go run ./infra/local/cmd/load $(LOAD_FLAGS)
