#!/usr/bin/env bash
# Installs what the structural-search packages (astgrep/, astedit/) need for
# their tests, cross-check and benchmark, into the repo-local .tools folder:
#
#   .tools/bin/ast-grep                     ast-grep 0.51.1 (reference engine)
#   .tools/grammars/libtree-sitter-dart.so  Dart grammar, loaded at run time
#
# Only the npm registry is used, nothing is installed globally, and running it
# again is cheap: each step is skipped when its result is already in place.
# Run from the repository root. Needs node/npm and gcc.
set -euo pipefail

AST_GREP_VERSION=0.51.1
DART_VERSION=1.0.0

root=$(pwd)
if [[ ! -f "$root/go.mod" ]]; then
	echo "install-astgrep.sh: run me from the repository root (no go.mod in $root)" >&2
	exit 2
fi
tools="$root/.tools"
mkdir -p "$tools/bin" "$tools/grammars"

need() {
	command -v "$1" >/dev/null 2>&1 || {
		echo "install-astgrep.sh: $1 is required ($2)" >&2
		exit 2
	}
}
need npm "install Node.js 18+ with npm"
need node "install Node.js 18+"
need gcc "install gcc to build the Dart grammar"

installed_version() { # package name -> version in .tools/node_modules, or empty
	local pj="$tools/node_modules/$1/package.json"
	[[ -f "$pj" ]] && node -e 'console.log(require(process.argv[1]).version)' "$pj" 2>/dev/null || true
}

# ast-grep's npm package puts the real binary in place with a postinstall
# script, and npm 11 may refuse to run install scripts; so scripts are off and
# the binary is taken straight from the platform package npm picked.
platform_pkg() {
	local arch
	case "$(uname -m)" in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) echo "install-astgrep.sh: no ast-grep build for $(uname -m)" >&2; exit 2 ;;
	esac
	case "$(uname -s)" in
	Linux) echo "@ast-grep/cli-linux-$arch-gnu" ;;
	Darwin) echo "@ast-grep/cli-darwin-$arch" ;;
	*) echo "install-astgrep.sh: no ast-grep build for $(uname -s)" >&2; exit 2 ;;
	esac
}
pkg=$(platform_pkg)

want=()
[[ "$(installed_version @ast-grep/cli)" == "$AST_GREP_VERSION" ]] || want+=("@ast-grep/cli@$AST_GREP_VERSION")
[[ "$(installed_version "$pkg")" == "$AST_GREP_VERSION" ]] || want+=("$pkg@$AST_GREP_VERSION")
[[ "$(installed_version tree-sitter-dart)" == "$DART_VERSION" ]] || want+=("tree-sitter-dart@$DART_VERSION")
if ((${#want[@]})); then
	echo "install-astgrep.sh: npm install ${want[*]}"
	# --ignore-scripts: tree-sitter-dart would otherwise run node-gyp, which we
	# do not need (we build the grammar ourselves below).
	npm install --prefix "$tools" --ignore-scripts --no-audit --no-fund --loglevel=error "${want[@]}"
fi

bin="$tools/node_modules/$pkg/ast-grep"
if [[ ! -x "$bin" ]]; then
	echo "install-astgrep.sh: $bin is missing after npm install" >&2
	exit 1
fi
ln -sfn "../node_modules/$pkg/ast-grep" "$tools/bin/ast-grep"
# The package's own .bin shim only works after its postinstall; point it at
# the real binary too, so either path on PATH gives the same program.
if [[ -d "$tools/node_modules/.bin" ]]; then
	ln -sfn "../$pkg/ast-grep" "$tools/node_modules/.bin/ast-grep"
fi
got=$("$tools/bin/ast-grep" --version 2>&1 || true)
if [[ "$got" != "ast-grep $AST_GREP_VERSION" ]]; then
	echo "install-astgrep.sh: $tools/bin/ast-grep --version said: $got (want ast-grep $AST_GREP_VERSION)" >&2
	exit 1
fi
echo "install-astgrep.sh: $got at $tools/bin/ast-grep"

# The Dart grammar as a shared library, the way editors load grammars. Its
# parser.c is generated for tree-sitter ABI 14, which go-tree-sitter accepts.
src="$tools/node_modules/tree-sitter-dart/src"
so="$tools/grammars/libtree-sitter-dart.so"
if ! grep -q '^#define LANGUAGE_VERSION 14$' "$src/parser.c"; then
	echo "install-astgrep.sh: $src/parser.c is not ABI 14" >&2
	exit 1
fi
if [[ ! -f "$so" || "$src/parser.c" -nt "$so" || "$src/scanner.c" -nt "$so" ]]; then
	echo "install-astgrep.sh: building $so"
	tmp="$so.tmp.$$"
	gcc -shared -fPIC -O2 -std=c11 -w -I "$src" -o "$tmp" "$src/parser.c" "$src/scanner.c"
	mv -f "$tmp" "$so"
fi
if ! nm -D --defined-only "$so" 2>/dev/null | grep -q ' T tree_sitter_dart$'; then
	if command -v nm >/dev/null 2>&1; then
		echo "install-astgrep.sh: $so does not export tree_sitter_dart" >&2
		exit 1
	fi
fi
echo "install-astgrep.sh: Dart grammar at $so"

# The command looks for run-time grammars in the per-user grammar folder
# (see defaultGrammars in cmd/builtin-tools), so the grammar goes there too:
# `builtin-tools call ast_grep '{"language": "dart", ...}'` then works with no
# flag. BUILTIN_TOOLS_GRAMMARS, when set, names that folder instead.
user_grammars="${BUILTIN_TOOLS_GRAMMARS:-${XDG_DATA_HOME:-$HOME/.local/share}/builtin-tools/grammars}"
user_grammars="${user_grammars%%:*}"
mkdir -p "$user_grammars"
if ! cmp -s "$so" "$user_grammars/libtree-sitter-dart.so"; then
	cp -f "$so" "$user_grammars/libtree-sitter-dart.so.tmp.$$"
	mv -f "$user_grammars/libtree-sitter-dart.so.tmp.$$" "$user_grammars/libtree-sitter-dart.so"
fi
echo "install-astgrep.sh: Dart grammar also in $user_grammars, where the command looks by default"
