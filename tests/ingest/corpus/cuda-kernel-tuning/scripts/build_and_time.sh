#!/usr/bin/env bash
# Build a kernel benchmark for the local GPU architecture and time it over several block sizes.
set -euo pipefail

src=${1:?usage: build_and_time.sh kernel.cu [arch]}
arch=${2:-$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n1 | tr -d .)}
out=build/$(basename "${src%.cu}")

mkdir -p build
nvcc -O3 -lineinfo -arch="sm_${arch}" -o "$out" "$src"

for block in 64 128 256 512 1024; do
  printf 'block=%-5s ' "$block"
  "$out" --block "$block" --repeat 50
done
