#!/usr/bin/env bash
# Fetches the CustomResourceDefinitions of the add-ons the chart can target, from each project's
# own published artifacts, into $DEST (SKILLGYM_SERVICES_DIR, default ~/.cache/skillgym/services, +/kubernetes/crds):
#   - prometheus-operator's ServiceMonitor and PrometheusRule: its Go module ships them
#     (example/prometheus-operator-crd/)
#   - KEDA's ScaledObject: its Go module ships it (config/crd/bases/)
#   - Strimzi's KafkaTopic: no Strimzi artifact ships the YAML (it is a release download), so it
#     is generated exactly as Strimzi's release build does (the CrdGenerator arguments of
#     io.strimzi:api's published pom) from the published io.strimzi:api and crd-generator jars.
# Idempotent: skipped while the stamp matches this script's hash.
set -euo pipefail

DEST="${SKILLGYM_SERVICES_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/skillgym/services}/kubernetes/crds"
# The newest of its root module (the one with the CRDs) that the Go module proxy serves.
PROMETHEUS_OPERATOR_VERSION="v0.85.0"
KEDA_VERSION="v2.21.0"
# Strimzi 1.x serves KafkaTopic as kafka.strimzi.io/v1 only (0.49 to 0.51 also serve v1beta2).
STRIMZI_VERSION="1.2.0"
DEPENDENCY_PLUGIN="org.apache.maven.plugins:maven-dependency-plugin:3.8.1"

log() { printf '[fetch-crds] %s\n' "$*"; }
die() {
    printf '[fetch-crds] ERROR: %s\n' "$*" >&2
    exit 1
}

want="$(sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1)"
stamp="$DEST/.fetched"
if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    log "already in $DEST"
    exit 0
fi

command -v go >/dev/null 2>&1 || die "go is required"
command -v mvn >/dev/null 2>&1 || die "mvn is required (Strimzi's jars come from Maven Central)"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
staged="$DEST.new"
rm -rf "$staged"
mkdir -p "$staged"

# The module's directory in the Go module cache (downloaded on first use).
module_dir() {
    local json dir
    json="$(cd "$scratch" && go mod download -json "$1")" || die "go mod download $1 failed: $json"
    dir="$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p' <<<"$json")"
    [[ -n "$dir" && -d "$dir" ]] || die "go mod download $1 gave no directory: $json"
    echo "$dir"
}

copy_from_module() {
    local module="$1" subdir="$2"
    shift 2
    local dir
    dir="$(module_dir "$module")"
    for file in "$@"; do
        [[ -f "$dir/$subdir/$file" ]] || die "$module has no $subdir/$file"
        cp "$dir/$subdir/$file" "$staged/$file"
    done
}

# Strimzi 1.x's classes need Java 21 or newer; the machine's default may be older.
java_21() {
    local candidate version
    for candidate in "${JAVA_HOME:+$JAVA_HOME/bin/java}" "$(command -v java || true)" /usr/lib/jvm/*/bin/java; do
        [[ -n "$candidate" && -x "$candidate" ]] || continue
        version="$("$candidate" -XshowSettings:properties -version 2>&1 |
            sed -n 's/^[[:space:]]*java.specification.version = //p')"
        if [[ "$version" =~ ^[0-9]+$ ]] && ((version >= 21)); then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

log "prometheus-operator $PROMETHEUS_OPERATOR_VERSION: ServiceMonitor, PrometheusRule"
copy_from_module "github.com/prometheus-operator/prometheus-operator@$PROMETHEUS_OPERATOR_VERSION" \
    example/prometheus-operator-crd \
    monitoring.coreos.com_servicemonitors.yaml monitoring.coreos.com_prometheusrules.yaml

log "KEDA $KEDA_VERSION: ScaledObject"
copy_from_module "github.com/kedacore/keda/v2@$KEDA_VERSION" config/crd/bases keda.sh_scaledobjects.yaml

log "Strimzi $STRIMZI_VERSION: KafkaTopic"
java="$(java_21)" || die "Strimzi $STRIMZI_VERSION's CRD generator needs Java 21 or newer (set JAVA_HOME)"
for artifact in api crd-generator; do
    mvn -q -B "$DEPENDENCY_PLUGIN:copy" -Dartifact="io.strimzi:$artifact:$STRIMZI_VERSION" \
        -DoutputDirectory="$scratch" >"$scratch/mvn.log" 2>&1 ||
        die "fetching io.strimzi:$artifact:$STRIMZI_VERSION failed: $(tail -5 "$scratch/mvn.log")"
done
"$java" -cp "$scratch/api-$STRIMZI_VERSION.jar:$scratch/crd-generator-$STRIMZI_VERSION.jar" \
    io.strimzi.crdgenerator.CrdGenerator \
    --label app:strimzi --label strimzi.io/crd-install:true --target-kube 1.16+ \
    --crd-api-version v1 --api-versions v1 --storage-version v1 \
    --yaml "io.strimzi.api.kafka.model.topic.KafkaTopic=$staged/kafka.strimzi.io_kafkatopics.yaml" \
    >"$scratch/generator.log" 2>&1 || die "Strimzi's CRD generator failed: $(tail -5 "$scratch/generator.log")"
grep -q '^  name: kafkatopics.kafka.strimzi.io$' "$staged/kafka.strimzi.io_kafkatopics.yaml" ||
    die "Strimzi's CRD generator wrote no KafkaTopic CRD"

chmod u+w "$staged"/*
rm -rf "$DEST"
mv "$staged" "$DEST"
echo "$want" >"$stamp"
log "in $DEST: $(cd "$DEST" && echo *.yaml)"
