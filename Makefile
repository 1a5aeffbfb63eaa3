# The two commands a fresh clone needs: `make run` (the local stack) and `make test` (everything
# CI checks). Both install what they need themselves.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := test

STACK := .local/bin/stack
NODE_DEPS := infra/local/node_modules/.package-lock.json

.PHONY: run test lint unit bench deps stack

## deps: the pinned Node.js tools of the local stack (dynalite)
deps: $(NODE_DEPS)

$(NODE_DEPS): infra/local/package.json infra/local/package-lock.json
	npm ci --prefix infra/local --no-audit --no-fund

stack:
	go build -o $(STACK) ./infra/local/cmd/stack

## run: the local stack in the foreground (DynamoDB API on 127.0.0.1:8000); Ctrl-C stops it
run: deps stack
	$(STACK) run

## test: lint, then every unit and integration test against the local stack, then each
## benchmark once so none rots
test: deps lint stack
	$(STACK) exec -- go test -count=1 -race ./...
	$(STACK) exec -- go test -count=1 -run '^$$' -bench . -benchtime 1x ./...

## lint: gofmt, go vet and staticcheck (pinned as a go.mod tool)
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './infra/local/node_modules/*')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	go tool staticcheck ./...

## bench: the benchmarks with their figures (fold, resume validation, resolve round trips)
bench: deps stack
	$(STACK) exec -- go test -count=1 -run '^$$' -bench . -benchmem ./...
