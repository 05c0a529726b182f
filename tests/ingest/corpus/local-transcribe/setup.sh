#!/usr/bin/env bash
set -euo pipefail
python3 -m venv .venv
.venv/bin/pip install --upgrade pip
.venv/bin/pip install "faster-whisper>=1.0"
if ! command -v ffmpeg >/dev/null; then
  echo "ffmpeg is missing: install it with your package manager" >&2
fi
