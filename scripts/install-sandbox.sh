#!/usr/bin/env bash
# Installs bubblewrap, the local sandbox every task phase runs in, and the system programs the
# task families install into their images (git, nginx, chromium), which the local sandbox takes
# from the host. No service is started: nginx is there for `nginx -t`, Chromium runs headless.
# Idempotent.
set -euo pipefail
declare -A program_of=([bubblewrap]=bwrap [git]=git [nginx]=nginx [chromium]=chromium)
# the sandbox's PATH has the sbin directories even where the caller's does not
have() { PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin" command -v "$1" >/dev/null 2>&1; }
missing=()
for package in bubblewrap git nginx chromium; do
    have "${program_of[$package]}" || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-sandbox: ${missing[*]} missing and apt-get is not available; install them with your package manager" >&2
    exit 1
fi
sudo=()
if [[ $(id -u) -ne 0 ]]; then
    command -v sudo >/dev/null 2>&1 || { echo "install-sandbox: run as root or install sudo" >&2; exit 1; }
    sudo=(sudo)
fi
# while installing, services are not started (Debian's policy-rc.d convention)
policy=/usr/sbin/policy-rc.d
own_policy=0
if [[ ! -e $policy ]]; then
    printf '#!/bin/sh\nexit 101\n' | "${sudo[@]}" tee "$policy" >/dev/null
    "${sudo[@]}" chmod 755 "$policy"
    own_policy=1
fi
trap 'if [[ $own_policy -eq 1 ]]; then "${sudo[@]}" rm -f "$policy"; fi' EXIT
echo "install-sandbox: installing ${missing[*]} ..."
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
for package in "${missing[@]}"; do
    have "${program_of[$package]}" ||
        { echo "install-sandbox: $package installed but ${program_of[$package]} is not on PATH" >&2; exit 1; }
done
