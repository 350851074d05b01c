#!/usr/bin/env bash
# Fuzzes every operator through the dispatcher with libFuzzer (clang-14, ASAN + UBSAN):
#   tools/fuzz.sh [seconds] [workers]      # default: 600 s, 1 worker
# Inputs start from the committed corpus (tests/fuzz/corpus/); new interesting inputs are
# merged back into it at the end, and crashes are written to tests/fuzz/findings/.
# Each finding, once fixed, stays in the corpus, which //tests:fuzz_corpus_test replays in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
workers="${2:-1}"
bash tools/setup.sh
bazel_fuzz=(bazel --output_base="${KILN_FUZZ_OUTPUT_BASE:-$HOME/.cache/kiln-bazel-fuzz}")
"${bazel_fuzz[@]}" build --config=fuzz --symlink_prefix=/ //tests:kiln_fuzzer
fuzzer="$("${bazel_fuzz[@]}" info --config=fuzz bazel-bin)/tests/kiln_fuzzer"
repo="$PWD"
work="$(mktemp -d)"  # new inputs, and libFuzzer's logs (it writes them to the working directory)
mkdir -p "$work/new"
mkdir -p tests/fuzz/findings
# The sanitizer build links the ASAN runtime as a shared library (for the Python extension).
export LD_PRELOAD="$(clang-14 -print-file-name=libclang_rt.asan-x86_64.so)"
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# Fork mode keeps going after a finding, so one run collects all of them.
(cd "$work" && "$fuzzer" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=3072 -max_len=4096 \
  -fork="$workers" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -print_final_stats=1 \
  -artifact_prefix="$repo/tests/fuzz/findings/" "$work/new" "$repo/tests/fuzz/corpus") ||
  echo "fuzz: findings were written to tests/fuzz/findings/"
# Keep the inputs that add coverage.
(cd "$work" && "$fuzzer" -merge=1 "$repo/tests/fuzz/corpus" "$work/new")
rm -rf "$work"
