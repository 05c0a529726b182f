"""Names shared by the operator, the Kubernetes sandbox client and the chart's CRDs."""

from __future__ import annotations

GROUP = "skillgym.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
SANDBOX_RUNS = "sandboxruns"
TRAINING_JOBS = "trainingjobs"

MANAGED_BY = "skillgym-operator"
LABEL_RUN = "skillgym.io/sandbox-run"
LABEL_ATTEMPT = "skillgym.io/attempt"
LABEL_ROLE = "skillgym.io/role"
LABEL_BUILD = "skillgym.io/image-build"
LABEL_TRAINING = "skillgym.io/training-job"
LABEL_NETWORK = "skillgym.io/network"
NETWORK_PUBLIC = "public"

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})

IO_DIR = "/skillgym/io"
MOUNTS_DIR = "/skillgym/mounts"
OUTCOME_FILE = f"{IO_DIR}/outcome"
EXIT_CODE_FILE = f"{IO_DIR}/exit_code"
STDIN_FILE = f"{IO_DIR}/stdin"
STDOUT_FILE = f"{IO_DIR}/stdout"
STDERR_FILE = f"{IO_DIR}/stderr"
RUN_CONTAINER = "run"
FETCH_CONTAINER = "fetch"
PUSH_CONTAINER = "push"
RELAY_CONTAINER = "relay"
PLAN_ENV = "SKILLGYM_SANDBOX_PLAN"
