#!/usr/bin/env bash
# Installs what the tests need (scripts/install.sh), then runs the whole
# suite under the race detector. Set BUILTIN_TOOLS_REQUIRE=all (CI does) so
# that a test whose real server is missing fails instead of skipping.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install.sh
go vet ./...
# Everything outside the tree-sitter packages (cgo, which a cross build
# lacks) also vets for macOS.
darwin=$(go list -f '{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}} ' ./... |
	grep -v -e go-tree-sitter -e 'builtin-tools/builtin-tools ' | cut -d' ' -f1)
GOOS=darwin CGO_ENABLED=0 go vet $darwin
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
go test -race -timeout 25m ./... "$@"
# The benchmarks and the attack reproductions are a module of their own
# (bench/go.mod); the reproductions (build tag hardening) run against a
# fresh build of cmd/builtin-tools and fail when a fixed defect is back.
(cd bench && go vet ./... && go vet -tags hardening ./... && go test ./...)
(cd bench && go test -tags hardening -count=1 -timeout 20m ./hardening/)
