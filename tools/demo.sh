#!/usr/bin/env bash
# Builds kiln and runs the main example: an MLP trained on the 8x8 digits (Python),
# then the C++ API tour. examples/demo.py is a shorter tour of the Python API.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //:python_package //:demo_cpp
PYTHONPATH="$PWD/bazel-bin" /usr/bin/python3 examples/train_mlp_digits.py --plot mlp_loss.png
bazel-bin/demo_cpp
