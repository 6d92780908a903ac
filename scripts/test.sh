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
# goimports is gofmt plus the import groups: the standard library first,
# then the rest.
unformatted=$(.tools/bin/goimports -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*'))
if [ -n "$unformatted" ]; then
	echo "goimports (gofmt and import groups) would change:" >&2
	echo "$unformatted" >&2
	exit 1
fi
# staticcheck, and deadcode with -test: functions that neither a program
# nor a test reaches. With -test the conformance suite and the harnesses
# under internal/test, which only tests use, are live; an Example is live
# only with its Output, which makes it run. Any finding fails, in every
# module (bench's tagged reproductions too).
tools="$PWD/.tools/bin"
lint() { # [-tags T]: in the current module
	"$tools/staticcheck" "$@" ./... || return 1
	local dead
	dead=$("$tools/deadcode" -test "$@" ./...) || return 1
	if [ -n "$dead" ]; then
		echo "deadcode: unreachable functions in $PWD:" >&2
		echo "$dead" >&2
		return 1
	fi
}
lint
go test -race -timeout 25m ./... "$@"
# The benchmarks and the attack reproductions are a module of their own
# (bench/go.mod); the reproductions (build tag hardening) run against a
# fresh build of cmd/builtin-tools and fail when a fixed defect is back.
(cd bench && go vet ./... && go vet -tags hardening ./... && lint && lint -tags hardening && go test ./...)
(cd bench/tsruntime && go vet ./... && lint)
(cd bench && go test -tags hardening -count=1 -timeout 20m ./hardening/)
