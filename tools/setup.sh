#!/usr/bin/env bash
# Installs every Debian package kiln needs. Idempotent: a no-op when all are present.
# Runs as root (as CI does); falls back to sudo otherwise.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap bazel-rules-java bazel-platforms   # the build (Bazel 4.2.3, offline)
  g++ python3-dev                                    # compiler, CPython headers for the extension
  python3-jinja2 python3-yaml                        # codegen
  python3-numpy python3-pytest                       # tests
  googletest libgtest-dev                            # C++ tests
  libabsl-dev libopenblas-openmp-dev libhwy-dev      # runtime libraries
  libsleef-dev                                       # vector math (what torch calls)
  libdnnl-dev                                        # oneDNN: float32 convolutions (what torch's CPU conv2d calls)
  python3-sklearn python3-matplotlib                 # the main example: digits data set, loss curve
  clang-14 libclang-common-14-dev                    # sanitizer builds and the fuzzer (tools/sanitize.sh)
  python3-torch                                      # the oracle of the differential and interchange tests
  python3-scipy python3-mpmath                       # references for special functions (gammaln, polygamma; mpmath high precision)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
