#!/usr/bin/env bash
# Installs what the eval kernels are tested with, from Debian, for
# /usr/bin/python3: pandas and matplotlib (DataFrame tables, figures as
# images), and ipykernel with jupyter_client, the anchor eval's benchmark
# measures beside itself. Node comes with the machine. Run from the repository root;
# scripts/install.sh calls it. Idempotent.
set -euo pipefail

need=()
/usr/bin/python3 -c 'import pandas' 2>/dev/null || need+=(python3-pandas)
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
# %pip's test installs a local package with the kernel's own pip.
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
/usr/bin/python3 -c 'import setuptools' 2>/dev/null || need+=(python3-setuptools)
# The magic rewriting is checked against IPython itself (tests only).
/usr/bin/python3 -c 'import IPython' 2>/dev/null || need+=(python3-ipython)
# The benchmark's anchor: Jupyter's kernel driven by jupyter_client.
/usr/bin/python3 -c 'import ipykernel, jupyter_client' 2>/dev/null || need+=(python3-ipykernel python3-jupyter-client)
# Notebooks run by eval are checked against Jupyter's own nbclient (tests only).
/usr/bin/python3 -c 'import nbclient, nbformat' 2>/dev/null || need+=(python3-nbclient python3-nbformat)
if [ ${#need[@]} -gt 0 ]; then
	echo "Debian packages: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
/usr/bin/python3 -c 'import pandas, matplotlib; print("pandas", pandas.__version__, "and matplotlib", matplotlib.__version__, ": installed")'
