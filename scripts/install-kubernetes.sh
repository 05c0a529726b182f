#!/usr/bin/env bash
# Builds the Kubernetes control plane the integration tests start (tests/support/kube/):
#   - kube-apiserver, kube-controller-manager, kube-scheduler from k8s.io/kubernetes
#     (the module in scripts/kubernetes/control-plane pins it and its staging modules)
#   - etcd from go.etcd.io/etcd/server/v3 (scripts/kubernetes/etcd)
#   - kwok, which simulates nodes and drives pod phases, with its published stage configs
# all from the Go module proxy, into $DEST/kubernetes/ (DEST: SKILLGYM_SERVICES_DIR, default
# ~/.cache/skillgym/services). Idempotent: a build whose inputs (go.mod, go.sum, this script) have not
# changed is skipped; Go's own build and module caches make a rebuild after a change quick.
#
# Cold: about 10-14 minutes on 2 cores (kube-apiserver is most of it); warm: seconds.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${SKILLGYM_SERVICES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skillgym/services}/kubernetes"
MODULES="$ROOT/scripts/kubernetes"
KUBERNETES_VERSION="v1.34.2"
KWOK_VERSION="v0.8.0"

log() { printf '[install-kubernetes] %s\n' "$*"; }
die() {
    printf '[install-kubernetes] ERROR: %s\n' "$*" >&2
    exit 1
}
elapsed() { echo "$(($(date +%s) - $1))s"; }

command -v go >/dev/null 2>&1 || die "go is required (https://go.dev/doc/install; Go 1.24 or newer)"
command -v openssl >/dev/null 2>&1 || die "openssl is required: the test fixtures make the cluster's certificates with it"

want="$(cat "${BASH_SOURCE[0]}" "$MODULES"/*/go.mod "$MODULES"/*/go.sum "$MODULES"/etcd/main.go "$MODULES"/fetch-crds.sh | sha256sum | cut -d' ' -f1)"
stamp="$DEST/.installed"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "already installed in $DEST (Kubernetes $KUBERNETES_VERSION, kwok $KWOK_VERSION)"
    exit 0
fi

start=$(date +%s)
mkdir -p "$DEST"
rm -rf "$DEST/bin.new" "$DEST/stages.new"
mkdir -p "$DEST/bin.new" "$DEST/stages.new"

# Without the version stamps /version reports v0.0.0, which clients refuse to parse.
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $pkg.gitVersion=$KUBERNETES_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=34"
    ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
done

log "building kube-apiserver, kube-controller-manager and kube-scheduler $KUBERNETES_VERSION (the longest step) ..."
(cd "$MODULES/control-plane" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags "$ldflags" -o "$DEST/bin.new/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler) || die "building the Kubernetes control plane failed"
log "control plane built ($(elapsed "$start"))"

log "building etcd ..."
(cd "$MODULES/etcd" && CGO_ENABLED=0 go build -trimpath -buildvcs=false -o "$DEST/bin.new/etcd" .) || die "building etcd failed"

log "building kwok $KWOK_VERSION ..."
GOBIN="$DEST/bin.new" CGO_ENABLED=0 go install -trimpath "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" ||
    die "building kwok failed"
# kwok moves nothing without stages: nodes become Ready and keep their lease, pods start and are
# deleted; how pods end is the tests' own stages (tests/support/kwok/), not kwok's Job-only one.
kwok_src="$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage"
for file in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    pod/fast/pod-ready.yaml pod/fast/pod-delete.yaml; do
    [[ -f "$kwok_src/$file" ]] || die "kwok's module has no stage $file"
    cp "$kwok_src/$file" "$DEST/stages.new/$(basename "$file")"
done
chmod u+w "$DEST/stages.new"/*

rm -rf "$DEST/bin" "$DEST/stages"
mv "$DEST/bin.new" "$DEST/bin"
mv "$DEST/stages.new" "$DEST/stages"
bash "$ROOT/scripts/kubernetes/fetch-crds.sh" || die "fetching third-party CRDs failed"
echo "$want" >"$stamp"
log "installed in $DEST ($(elapsed "$start")): $(ls "$DEST/bin" | tr '\n' ' ')"
