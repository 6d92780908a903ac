#!/usr/bin/env bash
# Installs what the tests need (scripts/install.sh), then runs the whole
# suite under the race detector. Set BUILTIN_TOOLS_REQUIRE=all (CI does) so
# that a test whose real server is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
go vet ./...
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go test -race -timeout 25m ./... "$@"
