"""The chart's RBAC on a real API server. Every ServiceAccount the chart's pods run as may make
exactly the requests its code makes (inventoried below), in the release namespace only; nothing
that reaches beyond that: secrets, cluster-scoped objects, exec/attach/port-forward, any other
namespace, CRD changes, escalation, impersonation. Checked by SubjectAccessReview for every values
set with RBAC of its own, then with the accounts' real tokens."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import helm_python as helm
import kubernetes
import pytest
import yaml
from skillgym_core.sandbox.base import Outcome
from skillgym_core.sandbox.kubernetes import KubernetesSandbox
from skillgym_core.store.local import LocalStore
from skillgym_operator.leader import LeaderElector, LeaseClient
from skillgym_trainer.launcher import KubernetesLauncher, TrainingRequest
from skillgym_trainer.settings import TrainerSettings

from tests.charts.test_chart import CHART, VALUES_FILES, load_values, pod_templates, token_mounted
from tests.operator.cluster import install_crds
from tests.support.kube_cluster import KubeCluster
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.deferred_service]

RELEASE = "sg"
GROUP, VERSION = "skillgym.io", "v1alpha1"
OTHER_NAMESPACE = "kube-system"
OPERATOR_LEASE = f"{RELEASE}-skillgym-operator"
VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
RBAC_KINDS = ("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")


@dataclass(frozen=True, order=True)
class Call:
    """One kind of request, in the namespace it is reviewed in (the release namespace unless said)."""

    verb: str
    resource: str
    group: str = ""
    subresource: str = ""
    name: str = ""  # set where the code only ever touches that one object

    def __str__(self) -> str:
        path = "/".join(filter(None, [self.group or "core", self.resource, self.subresource]))
        return f"{self.verb} {path}" + (f" {self.name}" if self.name else "")


def calls(group: str, resource: str, verbs: str, subresource: str = "", name: str = "") -> list[Call]:
    return [Call(verb, resource, group, subresource, name) for verb in verbs.split()]


def operator_calls(lease: str) -> set[Call]:
    """``kopf run --namespace=<release> --standalone`` with scanning disabled (no namespace or CRD
    watches, no peering objects) and the handlers in operator/skillgym_operator."""
    return {
        # kopf: list+watch each served resource; on TrainingJobs, patch adds its finalizer and
        # progress annotations. kube.get_custom reads a run or a training by name.
        *calls(GROUP, "sandboxruns", "get list watch"),
        *calls(GROUP, "trainingjobs", "get list watch patch"),
        # kube.patch_status_if_unchanged / patch_custom_status, and kopf's patch.status, through
        # the status subresource.
        *calls(GROUP, "sandboxruns", "patch", subresource="status"),
        *calls(GROUP, "trainingjobs", "patch", subresource="status"),
        # Children carry blockOwnerDeletion owner references (builders.common.owner_reference).
        *calls(GROUP, "sandboxruns", "update", subresource="finalizers"),
        *calls(GROUP, "trainingjobs", "update", subresource="finalizers"),
        # kopf event handler on sandbox pods; sandbox pods created, deleted by name; kube.pod_exists
        # (runs listed at start-up); kube.delete_pods lists a training's pods by label.
        *calls("", "pods", "get list watch create delete"),
        # kopf event handler on training jobs; kube.read_job; Kaniko and training jobs created;
        # cleanup_training_job deletes.
        *calls("batch", "jobs", "get list watch create delete"),
        # A training's headless service and config map: created, deleted on cleanup
        # (create_if_absent takes a 409 as done, so never read).
        *calls("", "services", "create delete"),
        *calls("", "configmaps", "create delete"),
        # runs.network.SandboxPolicy: created once per namespace, read if it exists, watched (kopf
        # event handler), its spec put back with a JSON patch.
        *calls("networking.k8s.io", "networkpolicies", "get list watch create patch"),
        # kopf.info / kopf.warn and kube.post_event post core v1 Events.
        *calls("", "events", "create"),
        # leader.LeaseClient: read, create once, then replace (renew or take over) its one Lease.
        *calls("coordination.k8s.io", "leases", "create"),
        *calls("coordination.k8s.io", "leases", "get update", name=lease),
    }


# shared/skillgym_core/sandbox/kubernetes.py: create the SandboxRun, follow it with a watch on
# its name (list+watch), delete it afterwards.
SANDBOX_CLIENT_CALLS = set(calls(GROUP, "sandboxruns", "create list watch delete"))
# services/trainer/skillgym_trainer/launcher.py: create the TrainingJob (409: already submitted).
LAUNCHER_CALLS = set(calls(GROUP, "trainingjobs", "create"))

# Denied to every account in its own namespace (and so everywhere).
NEVER_IN_NAMESPACE = [
    *calls("", "secrets", "get list watch create update patch delete"),
    *calls("", "pods", "get create", subresource="exec"),
    *calls("", "pods", "get create", subresource="attach"),
    *calls("", "pods", "get create", subresource="portforward"),
    *calls("", "serviceaccounts", "create", subresource="token"),
    *calls("", "serviceaccounts", "impersonate"),
    *calls("rbac.authorization.k8s.io", "roles", "create update patch escalate bind"),
    *calls("rbac.authorization.k8s.io", "rolebindings", "create update patch"),
]
NEVER_CLUSTER_WIDE = [
    *calls("", "nodes", "get list watch"),
    *calls("", "namespaces", "get list watch create delete"),
    *calls("", "secrets", "list watch"),
    *calls("", "pods", "list watch"),
    *calls("rbac.authorization.k8s.io", "clusterroles", "get list create update escalate bind"),
    *calls("rbac.authorization.k8s.io", "clusterrolebindings", "get list create update"),
    *calls("apiextensions.k8s.io", "customresourcedefinitions", "create update patch delete"),
    *calls("", "users", "impersonate"),
    *calls("", "groups", "impersonate"),
]

VALUE_SETS: dict[str, dict[str, Any]] = {
    "default": {},
    **{path.stem: load_values(path) for path in VALUES_FILES},
    "trainer-api-only": {"config": {"sandbox": "local"}, "services": {"trainer": {"kubernetesApi": True}}},
}


def render(values: dict[str, Any], namespace: str) -> list[dict[str, Any]]:
    with helm.Chart.load(str(CHART)) as chart:
        manifests = chart.render(values, name=RELEASE, namespace=namespace, is_install=True)
    return [doc for path, text in sorted(manifests.items()) if not path.endswith(".txt")
            for doc in yaml.safe_load_all(text) if doc]  # fmt: skip


def operator_deployment(docs: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((d for d in docs if d["kind"] == "Deployment"
                 and d["metadata"]["labels"]["app.kubernetes.io/component"] == "operator"), None)  # fmt: skip


def operator_lease(operator: dict[str, Any], namespace: str) -> str:
    """The Lease the operator elects its leader with; the inventory assumes how kopf is started."""
    container = operator["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert {f"--namespace={namespace}", "--standalone"} <= set(container["command"])
    assert env["SKILLGYM_OPERATOR_SCANNING_DISABLED"] == "true"
    assert env["SKILLGYM_OPERATOR_LEASE_NAMESPACE"] == namespace
    return str(env["SKILLGYM_OPERATOR_LEASE_NAME"])


def needed_calls(docs: list[dict[str, Any]], namespace: str) -> dict[str, set[Call]]:
    """Each account the chart's pods run as (or the chart creates) -> what the code in the pods
    that mount its token calls."""
    (sandbox,) = [d["data"]["SKILLGYM_SANDBOX"] for d in docs if "SKILLGYM_SANDBOX" in d.get("data", {})]
    needed: dict[str, set[Call]] = {d["metadata"]["name"]: set() for d in docs if d["kind"] == "ServiceAccount"}
    workloads = {f"{d['kind']}/{d['metadata']['name']}": d for d in docs}
    for workload, pod in pod_templates(docs).items():
        account = needed.setdefault(pod.get("serviceAccountName", "default"), set())
        if not token_mounted(pod, docs):
            continue
        labels = workloads[workload]["metadata"]["labels"]
        if labels["app.kubernetes.io/component"] == "operator":
            account |= operator_calls(operator_lease(workloads[workload], namespace))
            continue
        if sandbox == "kubernetes":
            account |= SANDBOX_CLIENT_CALLS
        if labels.get("skillgym.io/service") == "trainer":
            account |= LAUNCHER_CALLS
    return needed


def value_sets_with_their_own_rbac() -> list[str]:
    """One values set per distinct pair of (RBAC objects, calls the pods need)."""
    first: dict[str, str] = {}
    for name, values in VALUE_SETS.items():
        docs = render(values, "probe")
        needed = {account: sorted(map(str, wanted)) for account, wanted in needed_calls(docs, "probe").items()}
        rbac = [d for d in docs if d["kind"] in RBAC_KINDS]
        first.setdefault(json.dumps([rbac, needed], sort_keys=True), name)
    return list(first.values())


def apply_rbac(kube: KubeCluster, namespace: str, docs: list[dict[str, Any]]) -> None:
    """Only the chart's accounts, Roles and RoleBindings; cluster-wide RBAC must not exist."""
    assert not [d["metadata"]["name"] for d in docs if d["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    with kube.api_client() as client:
        core, rbac = kubernetes.client.CoreV1Api(client), kubernetes.client.RbacAuthorizationV1Api(client)
        create = {"ServiceAccount": core.create_namespaced_service_account,
                  "Role": rbac.create_namespaced_role,
                  "RoleBinding": rbac.create_namespaced_role_binding}  # fmt: skip
        for doc in docs:
            if doc["kind"] in create:
                create[doc["kind"]](namespace, doc)


class Reviewer:
    """Asks the API server whether a ServiceAccount of ``namespace`` may make a call."""

    def __init__(self, authorization: Any, namespace: str) -> None:
        self.authorization, self.namespace = authorization, namespace

    def allowed(self, account: str, call: Call, namespace: str | None) -> bool:
        attributes = {"verb": call.verb, "group": call.group, "resource": call.resource,
                      "subresource": call.subresource, "name": call.name, "namespace": namespace or ""}  # fmt: skip
        spec = {
            "user": f"system:serviceaccount:{self.namespace}:{account}",
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{self.namespace}", "system:authenticated"],
            "resourceAttributes": attributes,
        }
        review = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}
        return bool(self.authorization.create_subject_access_review(review).status.allowed)


@pytest.fixture
def reviewer(kube: KubeCluster, kube_namespace: str) -> Iterator[Reviewer]:
    with kube.api_client() as client:
        yield Reviewer(kubernetes.client.AuthorizationV1Api(client), kube_namespace)


def bound(reviewer: Reviewer, account: str, call: Call) -> None:
    """Wait until the authorizer's cache holds the Role and RoleBinding just created."""
    wait_for(lambda: reviewer.allowed(account, call, reviewer.namespace), 15, what=f"{account} bound")


def covered(needed: set[Call], call: Call) -> bool:
    return call in needed or replace(call, name="") in needed


def every_code_call(lease: str) -> set[Call]:
    return operator_calls(lease) | SANDBOX_CLIENT_CALLS | LAUNCHER_CALLS


@pytest.mark.parametrize("value_set", value_sets_with_their_own_rbac())
def test_each_account_may_make_exactly_its_codes_calls_and_nothing_beyond(
    kube: KubeCluster, kube_namespace: str, reviewer: Reviewer, value_set: str
) -> None:
    docs = render(VALUE_SETS[value_set], kube_namespace)
    needed = needed_calls(docs, kube_namespace)
    apply_rbac(kube, kube_namespace, docs)
    for account, wanted in needed.items():
        if wanted:
            bound(reviewer, account, min(wanted))
    # Every verb on every resource any of the code touches, so each account is also checked
    # against the others' rights (and a named Lease against any other Lease).
    matrix = {replace(call, verb=verb) for call in every_code_call(OPERATOR_LEASE) for verb in VERBS}
    matrix |= {replace(call, name="another") for call in matrix if call.name}
    checks = [
        *((account, call, kube_namespace, covered(wanted, call)) for account, wanted in needed.items()
          for call in sorted(matrix | set(NEVER_IN_NAMESPACE))),
        *((account, call, OTHER_NAMESPACE, False) for account in needed
          for call in sorted(matrix | set(NEVER_IN_NAMESPACE))),
        *((account, call, None, False) for account in needed for call in NEVER_CLUSTER_WIDE),
    ]  # fmt: skip
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda check: reviewer.allowed(*check[:3]), checks))
    wrong = sorted(
        f"{account}: {call} in {namespace or 'the cluster'} {'allowed' if got else 'denied'}"
        for (account, call, namespace, expected), got in zip(checks, answers, strict=True)
        if got != expected
    )
    assert wrong == []


def status_of(request: Callable[[], Any]) -> int:
    """The HTTP status of a request made with a real token (200 when it succeeds)."""
    try:
        request()
    except kubernetes.client.ApiException as exc:
        return int(exc.status)
    return 200


@pytest.fixture(scope="module")
def crds(kube: KubeCluster) -> None:
    """The chart's CRDs, created once (another module may have) and Established."""
    install_crds(kube)


def installed(kube: KubeCluster, namespace: str, reviewer: Reviewer) -> dict[str, set[Call]]:
    """The default values' RBAC applied in ``namespace``: account -> its calls, bound."""
    docs = render({}, namespace)
    apply_rbac(kube, namespace, docs)
    needed = {account: wanted for account, wanted in needed_calls(docs, namespace).items() if wanted}
    for account, wanted in needed.items():
        bound(reviewer, account, min(wanted))
    return needed


def account_with(needed: dict[str, set[Call]], call: Call) -> str:
    (account,) = [name for name, wanted in needed.items() if call in wanted]
    return account


def test_the_operators_token_holds_its_lease_and_reaches_nothing_else(
    kube: KubeCluster, kube_namespace: str, reviewer: Reviewer
) -> None:
    needed = installed(kube, kube_namespace, reviewer)
    lease = OPERATOR_LEASE
    account = account_with(needed, Call("update", "leases", "coordination.k8s.io", name=lease))
    token = kube.service_account_token(kube_namespace, account)
    with kube.api_client(token=token) as client:
        core, leases = kubernetes.client.CoreV1Api(client), kubernetes.client.CoordinationV1Api(client)
        assert status_of(lambda: core.list_namespaced_pod(kube_namespace)) == 200
        elector = LeaderElector(LeaseClient(leases, kube_namespace, lease), "replica-a", 15, 5.0, lambda: None)
        assert elector.try_once()  # creates the Lease
        assert elector.try_once()  # renews it
        assert LeaseClient(leases, kube_namespace, lease).read()["spec"]["holderIdentity"] == "replica-a"
        assert status_of(lambda: leases.read_namespaced_lease("another", kube_namespace)) == 403
        assert status_of(lambda: core.read_namespaced_pod("any", kube_namespace)) == 404  # may read a pod
        assert status_of(lambda: core.read_namespaced_config_map("any", kube_namespace)) == 403
        assert status_of(lambda: core.list_namespaced_secret(kube_namespace)) == 403
        assert status_of(lambda: core.list_namespaced_secret(OTHER_NAMESPACE)) == 403
        assert status_of(lambda: core.list_namespaced_pod(OTHER_NAMESPACE)) == 403
        assert status_of(lambda: core.list_node()) == 403
        assert status_of(lambda: core.list_namespace()) == 403


def test_the_services_token_runs_the_sandbox_client_and_the_launcher_and_nothing_else(
    kube: KubeCluster, kube_namespace: str, reviewer: Reviewer, crds: None, tmp_path: Path
) -> None:
    needed = installed(kube, kube_namespace, reviewer)
    account = account_with(needed, Call("create", "sandboxruns", GROUP))
    assert account == account_with(needed, Call("create", "trainingjobs", GROUP))
    token = kube.service_account_token(kube_namespace, account)
    with kube.api_client(token=token) as client, kube.api_client() as admin_client:
        admin = kubernetes.client.CustomObjectsApi(admin_client)

        def submitted_run() -> str | None:
            runs = admin.list_namespaced_custom_object(GROUP, VERSION, kube_namespace, "sandboxruns")["items"]
            return runs[0]["metadata"]["name"] if runs else None

        sandbox = KubernetesSandbox(LocalStore(tmp_path), namespace=kube_namespace, api_client=client, start_slack_s=60)
        with ThreadPoolExecutor(1) as pool:
            running = pool.submit(sandbox.run, ["true"], mounts=[])
            run = wait_for(lambda: running.done() or submitted_run(), 30, what="a SandboxRun")
            assert isinstance(run, str), running.result()
            status = {"phase": "Failed", "outcome": "error", "message": "ended from outside"}
            admin.patch_namespaced_custom_object_status(GROUP, VERSION, kube_namespace, "sandboxruns", run,
                                                        {"status": status})  # fmt: skip
            result = running.result(timeout=30)
        assert (result.outcome, result.stderr) == (Outcome.SANDBOX_ERROR, "ended from outside")
        assert submitted_run() is None  # the client deleted its run

        settings = TrainerSettings(launcher="kubernetes", k8s_namespace=kube_namespace)
        request = TrainingRequest("rbac-run", "datasets/rbac/chat.jsonl", "tiny")
        assert KubernetesLauncher(settings, client).submit(request) == f"{kube_namespace}/rbac-run"
        assert KubernetesLauncher(settings, client).submit(request) == f"{kube_namespace}/rbac-run"
        assert admin.get_namespaced_custom_object(GROUP, VERSION, kube_namespace, "trainingjobs", "rbac-run")

        custom, core = kubernetes.client.CustomObjectsApi(client), kubernetes.client.CoreV1Api(client)
        for plural in ("sandboxruns", "trainingjobs"):
            assert status_of(lambda p=plural: custom.get_namespaced_custom_object(
                GROUP, VERSION, kube_namespace, p, "rbac-run")) == 403  # fmt: skip
        assert status_of(lambda: custom.delete_namespaced_custom_object(
            GROUP, VERSION, kube_namespace, "trainingjobs", "rbac-run")) == 403  # fmt: skip
        assert status_of(lambda: custom.list_namespaced_custom_object(
            GROUP, VERSION, OTHER_NAMESPACE, "sandboxruns")) == 403  # fmt: skip
        assert status_of(lambda: core.list_namespaced_pod(kube_namespace)) == 403
        assert status_of(lambda: core.list_namespaced_secret(kube_namespace)) == 403
        assert status_of(lambda: core.list_node()) == 403
