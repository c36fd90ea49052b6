#!/usr/bin/env bash
# Runs a Python script of this directory from a Bazel test: run_py.sh
# SCRIPT [ARG...] (the script and its modules are the test's data).
set -euo pipefail
exec python3 "$@"
