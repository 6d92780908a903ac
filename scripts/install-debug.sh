#!/usr/bin/env bash
# Installs the debug adapters the dap package drives and tests against:
#
#   dlv (delve)         .tools/bin/dlv              (go install)
#   debugpy, pytest     /usr/lib/python3/dist-packages, for /usr/bin/python3 (apt-get)
#   lldb-dap-19         /usr/bin/lldb-dap-19         (apt-get lldb-19)
#   cargo, rustc        for the Rust fixture, if missing (apt-get)
#
# Run from the repository root; scripts/install.sh calls it. Idempotent.
set -euo pipefail

DELVE_VERSION=v1.27.2

root=$(pwd)
tools="$root/.tools"
mkdir -p "$tools/bin"

if [ -x "$tools/bin/dlv" ] && "$tools/bin/dlv" version 2>/dev/null | grep -q "Version: ${DELVE_VERSION#v}"; then
	echo "delve $DELVE_VERSION: already installed"
else
	echo "delve $DELVE_VERSION: installing"
	GOBIN="$tools/bin" GOFLAGS=-mod=mod go install "github.com/go-delve/delve/cmd/dlv@$DELVE_VERSION"
fi

need=()
/usr/bin/python3 -c 'import debugpy' 2>/dev/null || need+=(python3-debugpy)
/usr/bin/python3 -c 'import pytest' 2>/dev/null || need+=(python3-pytest)
command -v lldb-dap-19 >/dev/null || [ -x /usr/bin/lldb-dap-19 ] || need+=(lldb-19)
command -v gcc >/dev/null || need+=(gcc)
if [ ${#need[@]} -gt 0 ]; then
	echo "Debian packages: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
/usr/bin/python3 -c 'import debugpy, pytest; print("debugpy", debugpy.__version__, "and pytest", pytest.__version__, ": installed")'
/usr/bin/lldb-dap-19 --help >/dev/null 2>&1 || ls /usr/bin/lldb-dap-19 >/dev/null
echo "lldb-dap-19: installed"
