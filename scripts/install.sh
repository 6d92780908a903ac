#!/usr/bin/env bash
# Installs everything the test suite needs, into .tools/ at the repository
# root: the MCP Inspector and the static checks (staticcheck, deadcode,
# goimports) here,
# and through scripts/install-*.sh the language servers (gopls, pyright,
# typescript-language-server, clangd) and the structural-search references
# (ast-grep, the Dart grammar). npm packages go
# into .tools/node_modules, never globally; Debian packages come from apt-get.
# Idempotent: a second run only checks versions.
set -euo pipefail
cd "$(dirname "$0")/.."

INSPECTOR_VERSION=2.12.0
# staticcheck 2026.2.2 is module version v0.8.2.
STATICCHECK_VERSION=v0.8.2
XTOOLS_VERSION=v0.52.0 # golang.org/x/tools: deadcode, goimports

for cmd in go node npm gcc; do
	command -v "$cmd" >/dev/null || { echo "install.sh: $cmd is required" >&2; exit 2; }
done
mkdir -p .tools/bin
# GNU time measures peak memory in bench/astgrep.sh.
if [ ! -x /usr/bin/time ]; then
	echo "GNU time: installing from Debian"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time
fi
[ -f .tools/package.json ] || echo '{"private": true}' >.tools/package.json

have_npm() { # package version
	local f=".tools/node_modules/$1/package.json"
	[ -f "$f" ] && node -e "process.exit(require(process.argv[1]).version === process.argv[2] ? 0 : 1)" "$PWD/$f" "$2"
}

if have_npm @modelcontextprotocol/inspector "$INSPECTOR_VERSION"; then
	echo "MCP Inspector $INSPECTOR_VERSION: already installed"
else
	echo "MCP Inspector $INSPECTOR_VERSION: installing"
	# Its postinstall only matters in a source checkout; the published CLI is built.
	INSPECTOR_SKIP_CLIENT_INSTALL=1 npm install --prefix .tools --no-audit --no-fund --save-exact --loglevel=error \
		"@modelcontextprotocol/inspector@$INSPECTOR_VERSION"
fi
.tools/node_modules/.bin/mcp-inspector --cli --version >/dev/null

# The static checks scripts/test.sh runs, pinned: a Go program is checked
# by the module version it was built from.
have_go() { # binary module version
	[ -x ".tools/bin/$1" ] && go version -m ".tools/bin/$1" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+$2[[:space:]]+$3[[:space:]]"
}
for tool in "staticcheck honnef.co/go/tools $STATICCHECK_VERSION honnef.co/go/tools/cmd/staticcheck" \
	"deadcode golang.org/x/tools $XTOOLS_VERSION golang.org/x/tools/cmd/deadcode" \
	"goimports golang.org/x/tools $XTOOLS_VERSION golang.org/x/tools/cmd/goimports"; do
	read -r name mod version pkg <<<"$tool"
	if have_go "$name" "$mod" "$version"; then
		echo "$name $version: already installed"
	else
		echo "$name $version: installing"
		GOBIN="$PWD/.tools/bin" GOFLAGS=-mod=mod go install "$pkg@$version"
	fi
done

shopt -s nullglob
for script in scripts/install-*.sh; do
	echo "== $script"
	bash "$script"
done
echo "install.sh: done; tools are in $PWD/.tools"
