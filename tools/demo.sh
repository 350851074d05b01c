#!/usr/bin/env bash
# Builds kiln and runs the main examples: a CNN trained on the 8x8 digits with Adam, its
# weights saved and reloaded as safetensors (Python); the MLP on the same digits (Python);
# then a tiny network trained with the C++ API (examples/train_cpp.cc).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bazel build //:python_package //:train_cpp
PYTHONPATH="$PWD/bazel-bin" /usr/bin/python3 examples/train_cnn_digits.py --weights digits_cnn.safetensors
PYTHONPATH="$PWD/bazel-bin" /usr/bin/python3 examples/train_mlp_digits.py --plot mlp_loss.png
bazel-bin/train_cpp
