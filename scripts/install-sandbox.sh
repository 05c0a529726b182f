#!/usr/bin/env bash
# Installs bubblewrap, the local sandbox every task phase runs in. Idempotent.
set -euo pipefail
if command -v bwrap >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-sandbox: bubblewrap (bwrap) is missing and apt-get is not available; install it with your package manager" >&2
    exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-sandbox: run as root or install sudo" >&2; exit 1; }
    sudo=(sudo)
fi
echo "install-sandbox: installing bubblewrap ..."
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends bubblewrap
command -v bwrap >/dev/null 2>&1 || { echo "install-sandbox: bubblewrap installed but bwrap is not on PATH" >&2; exit 1; }
