#!/usr/bin/env bash
# Builds kiln and runs the main example (Python), then the C++ example.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //:python_package //:demo_cpp
PYTHONPATH="$PWD/bazel-bin" /usr/bin/python3 examples/demo.py
bazel-bin/demo_cpp
