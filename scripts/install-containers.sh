#!/usr/bin/env bash
# Installs the container engine the container sandbox backend drives (Podman, through its Docker
# Engine API) and the local base images a task's Dockerfile is built from, without any registry:
#   - Debian's podman with runc (crun fails on hybrid cgroup layouts) and explicit ulimits, in a
#     containers.conf of our own ($DEST/containers.conf, passed as CONTAINERS_CONF)
#   - localhost/skillgym-base/debian:bookworm: `debootstrap --variant=minbase` of bookworm from
#     the machine's Debian mirror, kept as a tarball in $DEST so a later run only re-imports it
#   - localhost/skillgym-base/python:3.11: that image plus Debian's python3 (3.11) and pip
# DEST: SKILLGYM_SERVICES_DIR/containers (default ~/.cache/skillgym/services/containers). Idempotent.
#
# Cold: about 2 minutes on 2 cores (apt, debootstrap, the python image); warm: a second.
set -euo pipefail

DEST="${SKILLGYM_SERVICES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skillgym/services}/containers"
SUITE="bookworm"
BASE_REPO="localhost/skillgym-base"

log() { printf '[install-containers] %s\n' "$*"; }
die() {
    printf '[install-containers] ERROR: %s\n' "$*" >&2
    exit 1
}

[[ $(id -u) -eq 0 ]] || die "the container engine runs as root here (rootless podman needs subuid ranges); run as root"
if ! command -v podman >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 || ! command -v debootstrap >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || die "podman, runc and debootstrap are missing and apt-get is not available"
    log "installing podman, runc and debootstrap ..."
    DEBIAN_FRONTEND=noninteractive apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends podman runc debootstrap \
        netavark aardvark-dns containernetworking-plugins fuse-overlayfs slirp4netns uidmap ca-certificates
fi

mkdir -p "$DEST"
cat >"$DEST/containers.conf" <<'EOF'
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
EOF
export CONTAINERS_CONF="$DEST/containers.conf"

mirror() {
    local uri
    uri="$(grep -h -m1 -E '^(URIs:|deb )' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null |
        grep -v security | head -1 | sed -E 's/^URIs: *//; s/^deb +(\[[^]]*\] +)?//; s/ .*//')"
    echo "${uri:-http://deb.debian.org/debian}"
}

tarball="$DEST/debian-$SUITE-minbase.tar"
if [[ ! -s "$tarball" ]]; then
    log "making a $SUITE base system with debootstrap ($(mirror)) ..."
    rm -rf "$DEST/rootfs" "$tarball.new"
    debootstrap --variant=minbase "$SUITE" "$DEST/rootfs" "$(mirror)" >"$DEST/debootstrap.log" 2>&1 ||
        die "debootstrap failed; see $DEST/debootstrap.log"
    # the image's apt uses the same mirror the machine does
    cp /etc/apt/sources.list.d/*.sources "$DEST/rootfs/etc/apt/sources.list.d/" 2>/dev/null || true
    tar -C "$DEST/rootfs" -cf "$tarball.new" .
    mv "$tarball.new" "$tarball"
    rm -rf "$DEST/rootfs"
fi

# The machine's CA bundle goes into the images, so pip and apt inside a build trust the same
# TLS endpoints (package mirrors) the host does. It is kept beside Debian's own bundle too, which
# any apt-get install that brings ca-certificates rewrites, and the variables name that copy.
ca_bundle=/etc/ssl/certs/ca-certificates.crt
if [[ -s "$ca_bundle" ]]; then cp "$ca_bundle" "$DEST/ca-bundle.crt"; else : >"$DEST/ca-bundle.crt"; fi
stamp="$(cat "${BASH_SOURCE[0]}" "$DEST/ca-bundle.crt" | sha256sum | cut -c1-16)"
if [[ "$(cat "$DEST/.images" 2>/dev/null)" != "$stamp" ]] || ! podman image exists "$BASE_REPO/python:3.11"; then
    log "importing $BASE_REPO/debian:$SUITE ..."
    podman import --change 'CMD ["/bin/bash"]' "$tarball" "$BASE_REPO/debian-rootfs:$SUITE" >/dev/null
    printf 'FROM %s\nCOPY ca-bundle.crt /etc/ssl/certs/ca-certificates.crt\nCOPY ca-bundle.crt /etc/ssl/host-ca-bundle.crt\nENV SSL_CERT_FILE=/etc/ssl/host-ca-bundle.crt PIP_CERT=/etc/ssl/host-ca-bundle.crt REQUESTS_CA_BUNDLE=/etc/ssl/host-ca-bundle.crt\n' \
        "$BASE_REPO/debian-rootfs:$SUITE" | podman build -q -t "$BASE_REPO/debian:$SUITE" -f - "$DEST" >/dev/null
    log "building $BASE_REPO/python:3.11 ..."
    printf 'FROM %s\nRUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip python3-venv && ln -sf /usr/bin/python3 /usr/local/bin/python && rm -rf /var/lib/apt/lists/*\nENV PIP_BREAK_SYSTEM_PACKAGES=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1\n' \
        "$BASE_REPO/debian:$SUITE" | podman build -q -t "$BASE_REPO/python:3.11" -f - "$DEST" >/dev/null
    echo "$stamp" >"$DEST/.images"
fi
log "ready: $(podman --version), base images $BASE_REPO/debian:$SUITE and $BASE_REPO/python:3.11"
