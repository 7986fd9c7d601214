#!/usr/bin/env bash
# Makes the Python virtualenv the SDK's tests run in (default .data/python-venv, gitignored):
# python3 -m venv, then the SDK from this folder with pytest, pytest-asyncio, the official
# MCP client (mcp 2.3.0), httpx and mypy. Run again, it only reinstalls the SDK when its
# sources changed (and the tools when their list did). pip uses the machine's own configuration (index, find-links); it tries an
# unreachable index once instead of five times (PIP_RETRIES=0 unless set), which on a
# machine with only a local package index is the difference between 10 s and 2 min.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-$here/../../.data/python-venv}
mkdir -p "$(dirname "$venv")"
export PIP_RETRIES=${PIP_RETRIES:-0} PIP_DISABLE_PIP_VERSION_CHECK=1

# One maker at a time (test files of two projects may ask at once).
exec 9>"$venv.lock"
flock 9

tools="pytest pytest-asyncio mcp==2.3.0 httpx mypy"
# The sources only: not what setuptools writes beside them (src/*.egg-info), nor caches.
stamp=$(cd "$here" && find pyproject.toml README.md src/mcpgw_agent -type f ! -path '*/__pycache__/*' | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
fresh=
if [ ! -x "$venv/bin/python" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  fresh=1
fi
# setuptools builds the wheel from build/lib, which keeps modules since moved or deleted from src:
# without this, a module that moved would still be installed at its old path.
clean_build() { rm -rf "$here/build"; }
if [ "$(cat "$venv/.tools" 2>/dev/null)" != "$tools" ]; then
  clean_build
  # shellcheck disable=SC2086 # one word per package
  "$venv/bin/pip" install -q "$here" $tools
  echo "$tools" >"$venv/.tools"
  [ -z "$fresh" ] || echo "$stamp" >"$venv/.sdk-stamp"
fi
if [ "$(cat "$venv/.sdk-stamp" 2>/dev/null)" != "$stamp" ]; then
  # The same version number with other sources: pip would keep the old copy unless forced.
  clean_build
  "$venv/bin/pip" install -q "$here"
  "$venv/bin/pip" install -q --force-reinstall --no-deps "$here"
  echo "$stamp" >"$venv/.sdk-stamp"
fi
"$venv/bin/python" -c 'import mcpgw_agent, mcp, pytest, mypy' >/dev/null
echo "$venv"
