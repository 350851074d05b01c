#!/usr/bin/env bash
# Builds everything and runs every test (C++ and Python). Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //...
# Always run the tests (never reuse cached results), and show their output (pytest and
# GoogleTest summaries) so the CI log says what ran.
bazel test //... --nocache_test_results --test_output=all
