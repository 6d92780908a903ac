#!/usr/bin/env bash
# Installs the language servers the lsp package drives and tests against,
# into .tools/ at the repository root (nothing global except clangd, which
# comes from Debian). Idempotent: run it again and it only checks.
#
#   gopls                       .tools/bin/gopls            (go install)
#   pyright-langserver, pyright .tools/node_modules/.bin    (npm)
#   typescript-language-server  .tools/node_modules/.bin    (npm, with typescript)
#   clangd                      /usr/bin/clangd             (apt-get)
#
# Run from the repository root. scripts/install.sh calls it.
set -euo pipefail

GOPLS_VERSION=v0.23.0
PYRIGHT_VERSION=1.1.414
# typescript-language-server 6 needs Node 22; Debian's Node is 20.
TSLS_VERSION=5.3.0
# TypeScript 7 is the native port without tsserver.js, which the server drives.
TYPESCRIPT_VERSION=5.9.3

root=$(pwd)
if [ ! -f "$root/go.mod" ]; then
	echo "install-lsp.sh: run me from the repository root (no go.mod in $root)" >&2
	exit 1
fi
tools="$root/.tools"
mkdir -p "$tools/bin"

# gopls
if [ -x "$tools/bin/gopls" ] && "$tools/bin/gopls" version 2>/dev/null | grep -q "$GOPLS_VERSION"; then
	echo "gopls $GOPLS_VERSION: already installed"
else
	echo "gopls $GOPLS_VERSION: installing"
	GOBIN="$tools/bin" GOFLAGS=-mod=mod go install "golang.org/x/tools/gopls@$GOPLS_VERSION"
fi

# npm servers, pinned, in a private package.json under .tools
npm_want="pyright@$PYRIGHT_VERSION typescript-language-server@$TSLS_VERSION typescript@$TYPESCRIPT_VERSION"
npm_have() {
	local pkg=$1 ver=$2 f="$tools/node_modules/$1/package.json"
	[ -f "$f" ] && node -e "process.exit(require('$f').version === '$ver' ? 0 : 1)"
}
if npm_have pyright "$PYRIGHT_VERSION" && npm_have typescript-language-server "$TSLS_VERSION" && npm_have typescript "$TYPESCRIPT_VERSION"; then
	echo "npm servers ($npm_want): already installed"
else
	if ! command -v npm >/dev/null; then
		echo "npm servers: installing nodejs and npm from Debian"
		apt-get update
		DEBIAN_FRONTEND=noninteractive apt-get install -y nodejs npm
	fi
	echo "npm servers: installing $npm_want"
	[ -f "$tools/package.json" ] || echo '{"private": true}' >"$tools/package.json"
	# shellcheck disable=SC2086
	npm install --prefix "$tools" --no-audit --no-fund --save-exact $npm_want
fi

# clangd from Debian
if command -v clangd >/dev/null; then
	echo "clangd: already installed ($(clangd --version | head -1))"
else
	echo "clangd: installing from Debian"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y clangd
fi
