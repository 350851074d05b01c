#!/usr/bin/env bash
# Builds everything and runs every test (C++ and Python). Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //...
bazel test //... --test_output=errors
