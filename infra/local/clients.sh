#!/usr/bin/env bash
# Generates a Go client from openapi.yaml with each of two generators, pinned, and builds it:
# oapi-codegen and openapi-generator's go generator both read the bundle (package clientgen,
# OpenAPI 3.0.3 in one file), and each client must have a method for every operation of the
# document. The clients are written under .local/clients and never committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
OAPI_CODEGEN=github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION:?}
OAPI_RUNTIME=github.com/oapi-codegen/runtime@${OAPI_RUNTIME_VERSION:?}
JAR=.local/tools/openapi-generator-cli-${OPENAPI_GENERATOR_VERSION:?}.jar
out=.local/clients
rm -rf "$out" && mkdir -p "$out/oapi-codegen" .local/tools
go run ./infra/local/cmd/bundle -o "$out/openapi.bundle.json"
mapfile -t operations < <(go run ./infra/local/cmd/bundle -operations)

if [ ! -f "$JAR" ]; then
  mvn -q dependency:copy -Dartifact="org.openapitools:openapi-generator-cli:$OPENAPI_GENERATOR_VERSION" -DoutputDirectory=.local/tools
fi

# Each generated module builds on its own, its dependencies pinned (-mod=mod resolves only what
# the pinned requirements need, by minimal version selection).
build() {
  (cd "$1" && GOFLAGS=-mod=mod GOWORK=off go build ./... && GOFLAGS=-mod=mod GOWORK=off go vet ./...)
}
# has FILE_GLOB PATTERN_PREFIX PATTERN_SUFFIX: every operation has its method.
has() {
  local missing=()
  for op in "${operations[@]}"; do
    grep -q "$2${op^}$3" $1 || missing+=("$op")
  done
  if [ ${#missing[@]} -gt 0 ]; then echo "$1: no method for ${missing[*]}" >&2; exit 1; fi
}

go run "$OAPI_CODEGEN" -generate types,client -package ihclient -o "$out/oapi-codegen/client.go" "$out/openapi.bundle.json"
printf 'module ihclient\n\ngo 1.24\n\nrequire %s %s\n' "${OAPI_RUNTIME%@*}" "${OAPI_RUNTIME#*@}" > "$out/oapi-codegen/go.mod"
build "$out/oapi-codegen"
has "$out/oapi-codegen/client.go" 'func (c \*Client) ' '\(WithBody\)\?('
echo "oapi-codegen ${OAPI_CODEGEN_VERSION}: ${#operations[@]} operations, builds"

java -jar "$JAR" generate -i "$out/openapi.bundle.json" -g go -o "$out/openapi-generator" --package-name ihclient \
  --global-property apiTests=false,modelTests=false,apiDocs=false,modelDocs=false >"$out/openapi-generator.log" 2>&1 \
  || { cat "$out/openapi-generator.log"; exit 1; }
build "$out/openapi-generator"
has "$out/openapi-generator/api_*.go" 'APIService) ' 'Execute('
echo "openapi-generator ${OPENAPI_GENERATOR_VERSION}: ${#operations[@]} operations, builds"
