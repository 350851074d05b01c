#!/usr/bin/env bash
# Builds kiln with AddressSanitizer + UndefinedBehaviorSanitizer (clang-14, leak detection on)
# and runs every test under them (time limits raised: the Python suite takes ~5 min under them).
# Uses its own Bazel output base, so the normal build stays.
#   tools/sanitize.sh                      # everything
#   tools/sanitize.sh //tests:runtime_tests   # one target
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(//...)
bazel --output_base="$HOME/.cache/kiln-bazel-asan" test --config=asan --symlink_prefix=/ --nocache_test_results \
  --test_output=errors --test_timeout=1200 \
  "${targets[@]}"
