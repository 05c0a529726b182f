"""KubernetesSandbox end to end: the client creates SandboxRuns on an emulated API server, the real
operator turns them into pods, and a stand-in kubelet runs those pods for real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes
import pytest
from skillgym_core.archive import pack_dir
from skillgym_core.errors import SandboxError
from skillgym_core.sandbox import kubernetes as kubernetes_sandbox
from skillgym_core.sandbox import kubernetes_session
from skillgym_core.sandbox.base import Limits, Mount, Outcome, Sandbox
from skillgym_core.sandbox.kubernetes import KubernetesSandbox, unpacked_mb
from skillgym_core.sandbox.kubernetes_session import KubernetesSession
from skillgym_core.sandbox.session import open_session, resume_session
from skillgym_core.store.local import LocalStore
from skillgym_core.taskrun import TaskRunner

from tests.operator.apiserver import ApiServer
from tests.operator.conftest import NAMESPACE, apiserver, node, operator, operator_settings, wait_for  # noqa: F401
from tests.operator.node import SandboxNode
from tests.support import verdict_attacks

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.fixture
def store(tmp_path: Path) -> LocalStore:
    return LocalStore(tmp_path / "store")


@pytest.fixture
def sandbox(apiserver: ApiServer, store: LocalStore) -> KubernetesSandbox:  # noqa: F811
    return KubernetesSandbox(store, namespace=NAMESPACE, api_client=apiserver.api_client, start_slack_s=60)


def test_implements_the_sandbox_protocol(sandbox: KubernetesSandbox) -> None:
    assert isinstance(sandbox, Sandbox)
    assert sandbox.describe()["namespace"] == NAMESPACE


def test_run_round_trips_mounts_output_and_exit_code(
    sandbox: KubernetesSandbox,
    node: SandboxNode,  # noqa: F811
    apiserver: ApiServer,  # noqa: F811
    store: LocalStore,
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "input.txt").write_text("hello\n")
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "check.sh").write_text("tr a-z A-Z < /app/input.txt > /app/output.txt; cat -; echo oops >&2; exit 3\n")

    result = sandbox.run(
        ["sh", "/tests/check.sh"],
        mounts=[Mount(workspace, "/app", writable=True), Mount(tests, "/tests")],
        workdir="/app",
        limits=Limits(wall_s=20),
        stdin=b"from stdin\n",
    )
    assert result.outcome is Outcome.OK, result
    assert result.exit_code == 3
    assert result.stdout == "from stdin\n" and result.stderr == "oops\n"
    assert (workspace / "output.txt").read_text() == "HELLO\n"
    assert (workspace / "input.txt").read_text() == "hello\n"
    # The read-only mount was uploaded once, content-addressed, and the run left nothing behind.
    assert any(key.startswith("sandbox/inputs/") for key in store.list())
    assert not list(store.list("sandbox/runs/"))
    # The run is deleted, and its pod with it (an API server's garbage collector would too).
    wait_for(lambda: not apiserver.objects("skillgym.io/v1alpha1/sandboxruns", NAMESPACE), what="run deleted")
    wait_for(lambda: not apiserver.objects("v1/pods", NAMESPACE), what="its pod removed")


def test_wall_timeout_kills_the_command(
    sandbox: KubernetesSandbox, node: SandboxNode, tmp_path: Path  # noqa: F811
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = sandbox.run(
        ["sh", "-c", "echo started; sleep 60; echo never"],
        mounts=[Mount(workspace, "/app", writable=True)],
        limits=Limits(wall_s=1),
    )
    assert result.outcome is Outcome.TIMEOUT and result.exit_code is None
    assert result.stdout == "started\n"
    assert result.duration_s < 30


def test_manifest_matches_the_crd_schema(sandbox: KubernetesSandbox) -> None:
    import jsonschema
    import yaml

    crd_path = Path(__file__).resolve().parents[3] / "charts/skillgym/crds/sandboxruns.skillgym.io.yaml"
    schema = yaml.safe_load(crd_path.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    body = sandbox.manifest(
        "sbx-1",
        ["bash", "-lc", "make"],
        [{"target": "/app", "key": "sandbox/inputs/x.tar.gz", "writable": True, "resultKey": "k"}],
        "/app",
        {"A": "1"},
        Limits(wall_s=5, cpus=0.5),
        "sandbox/runs/sbx-1/stdin",
    )
    jsonschema.Draft4Validator(schema).validate(body)  # OpenAPI v3.0 schemas follow draft 4 here
    assert body["spec"]["limits"]["cpu"] == "0.5"


def test_environment_image_is_built_from_the_task_dockerfile(sandbox: KubernetesSandbox, tmp_path: Path) -> None:
    env = tmp_path / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text("FROM python:3.11-slim\n")
    built = sandbox.with_environment(env)
    body = built.manifest("sbx-2", ["true"], [], "/app", {}, Limits(), None)
    assert "image" not in body["spec"]
    assert built.store.get_bytes(body["spec"]["build"]["contextKey"]) == pack_dir(env)
    assert sandbox.build_context_key is None


def test_storage_makes_room_for_the_unpacked_mounts(sandbox: KubernetesSandbox, tmp_path: Path) -> None:
    """Every writable path in the pod is an emptyDir capped at ephemeralStorageMb, so the mounts
    fetched into it must fit beside the room the command gets to write."""
    workspace = tmp_path / "ws"
    (workspace / "data").mkdir(parents=True)
    (workspace / "data" / "blob").write_bytes(b"x" * (3 * 2**20 + 1))
    (workspace / "link").symlink_to(workspace / "data" / "blob")
    assert unpacked_mb(workspace) == 4
    body = sandbox.manifest("sbx-3", ["true"], [], "/app", {}, Limits(file_size_mb=32), None, input_mb=4)
    assert body["spec"]["limits"]["ephemeralStorageMb"] == 128 + 4


def test_reserved_mount_targets_fail_before_anything_is_uploaded(
    sandbox: KubernetesSandbox, store: LocalStore, tmp_path: Path
) -> None:
    result = sandbox.run(["true"], mounts=[Mount(tmp_path, "/proc/self")])
    assert result.outcome is Outcome.SANDBOX_ERROR and result.detail["reason"] == "bad_mount"
    assert not list(store.list())


def test_a_session_keeps_one_pod_warm_for_all_its_commands(
    sandbox: KubernetesSandbox,
    node: SandboxNode,  # noqa: F811
    apiserver: ApiServer,  # noqa: F811
    store: LocalStore,
    tmp_path: Path,
) -> None:
    workspace, skills = tmp_path / "ws", tmp_path / "skills"
    workspace.mkdir()
    skills.mkdir()
    (workspace / "input.txt").write_text("3 4\n")
    (skills / "SKILL.md").write_text("# add\n")
    session = open_session(sandbox, mounts=[Mount(workspace, "/app", writable=True), Mount(skills, "/skills")],
                           workdir="/app", env={"GREETING": "hi"}, limits=Limits(wall_s=120), idle_s=60)  # fmt: skip
    assert isinstance(session, KubernetesSession)
    first = session.run("read a b < input.txt; echo $((a + b)) > answer.txt; echo $GREETING; cat /skills/SKILL.md",
                        timeout_s=20)  # fmt: skip
    assert (first.outcome, first.exit_code, first.stdout) == (Outcome.OK, 0, "hi\n# add\n"), first
    assert session.run("cat > note.txt", timeout_s=10, stdin=b"kept\n").exit_code == 0
    second = session.run("cat answer.txt note.txt; echo bad >&2; exit 5", timeout_s=10)
    assert (second.exit_code, second.stdout, second.stderr) == (5, "7\nkept\n", "bad\n")
    assert session.run("sleep 30", timeout_s=1).outcome is Outcome.TIMEOUT
    assert session.run("echo after", timeout_s=10).stdout == "after\n"
    assert not (workspace / "answer.txt").exists()  # the files live in the pod until the session closes
    pods = apiserver.objects("v1/pods", NAMESPACE)
    assert len(pods) == 1  # one pod served every command
    containers = {c["name"]: c for c in next(iter(pods.values()))["spec"]["containers"]}
    assert containers["relay"]["envFrom"] and "envFrom" not in containers["run"]  # only the relay holds the keys
    session.close()
    assert (workspace / "answer.txt").read_text() == "7\n" and (workspace / "note.txt").read_text() == "kept\n"
    assert not list(store.list("sandbox/runs/"))
    wait_for(lambda: not apiserver.objects("skillgym.io/v1alpha1/sandboxruns", NAMESPACE), what="run deleted")


def test_a_session_whose_pod_cannot_be_placed_says_why_when_its_step_times_out(
    apiserver: ApiServer,  # noqa: F811
    operator: Any,  # noqa: F811
    store: LocalStore,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(kubernetes_session, "REPLY_SLACK_S", 1.0)
    monkeypatch.setattr(kubernetes_session, "STATUS_EVERY_S", 0.2)
    sandbox = KubernetesSandbox(store, namespace=NAMESPACE, api_client=apiserver.api_client, start_slack_s=4)
    session = open_session(sandbox, mounts=[Mount(tmp_path, "/app", writable=True)], workdir="/app", env=None,
                           limits=Limits(wall_s=60), idle_s=60)  # fmt: skip
    pod = next(iter(wait_for(lambda: apiserver.objects("v1/pods", NAMESPACE), what="pod")))
    why = "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector."
    kubernetes.client.CoreV1Api(apiserver.api_client).patch_namespaced_pod_status(pod, NAMESPACE, {"status": {
        "phase": "Pending",
        "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": why}],
    }})  # fmt: skip
    result = session.run("true", timeout_s=1)
    assert result.outcome is Outcome.SANDBOX_ERROR and result.detail["reason"] == "step_deadline"
    assert f"it was Pending (Unschedulable): {why}" in result.stderr
    session.close(keep_files=False)


def test_a_session_resumes_from_its_record_and_can_be_discarded(
    sandbox: KubernetesSandbox,
    node: SandboxNode,  # noqa: F811
    apiserver: ApiServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    mounts = [Mount(workspace, "/app", writable=True)]
    session = open_session(sandbox, mounts=mounts, workdir="/app", env=None, limits=Limits(wall_s=120), idle_s=60)
    assert session.run("echo one > n", timeout_s=20).exit_code == 0
    again = resume_session(sandbox, session.record(), mounts=mounts, workdir="/app", env=None,
                           limits=Limits(wall_s=120))  # fmt: skip
    assert again.run("cat n; echo two >> n", timeout_s=10).stdout == "one\n"
    again.close(keep_files=False)
    assert not (workspace / "n").exists()
    wait_for(lambda: not apiserver.objects("skillgym.io/v1alpha1/sandboxruns", NAMESPACE), what="run deleted")
    with pytest.raises(SandboxError, match="session"):
        resume_session(sandbox, session.record(), mounts=mounts, workdir="/app", env=None, limits=Limits(wall_s=9))


def test_a_tasks_dockerfile_reaches_its_runs_as_a_build_context(sandbox: KubernetesSandbox, store: LocalStore,
                                                               tmp_path: Path) -> None:
    from skillgym_core.contracts.task import TaskDir
    from skillgym_core.envbuild import environment_provider
    from skillgym_core.envbuild.cluster import ClusterImageProvider
    from skillgym_core.sandbox.base import BuildContext
    from skillgym_core.sandbox.kubernetes import split_root
    from skillgym_core.sandbox.local import LocalSandbox
    from skillgym_core.settings import CommonSettings

    from tests.support.harbor_tasks import apt_inventory

    task = TaskDir(apt_inventory(tmp_path / "task"))
    provider = ClusterImageProvider(store)
    prepared = provider.prepare(task)
    assert prepared is not None and not prepared.cache_hit
    assert store.get_bytes(prepared.context_key) == pack_dir(task.root / "environment")
    again = provider.prepare(task)
    assert again is not None and again.cache_hit and again.context_key == prepared.context_key
    mounts, root = split_root([Mount(tmp_path, "/app", writable=True), *prepared.mounts()])
    assert mounts == [Mount(tmp_path, "/app", writable=True)]
    body = sandbox.manifest("sbx-9", ["true"], [], "/app", {}, Limits(), None, root=root)
    assert body["spec"]["build"] == {"contextKey": prepared.context_key} and "image" not in body["spec"]
    (task.root / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\n")
    changed = provider.prepare(task)
    assert changed is not None and changed.context_key != prepared.context_key
    off = environment_provider(CommonSettings(store="local", store_root=tmp_path / "s"), "kubernetes")
    assert isinstance(off, ClusterImageProvider) and off.prepare(task) is None  # no build unless there is a registry
    refused = LocalSandbox().run(["true"], mounts=[BuildContext(context_key=prepared.context_key)])
    assert refused.outcome is Outcome.SANDBOX_ERROR and refused.detail["reason"] == "image_environment"


def test_a_prebuilt_docker_image_is_what_the_tasks_pods_run(sandbox: KubernetesSandbox, store: LocalStore,
                                                            tmp_path: Path) -> None:
    from skillgym_core.contracts.task import TaskDir
    from skillgym_core.envbuild.cluster import ClusterImageProvider
    from skillgym_core.sandbox.kubernetes import split_root

    from tests.support.harbor_tasks import hello_world, prebuilt_image

    provider = ClusterImageProvider(store)
    prepared = provider.prepare(TaskDir(prebuilt_image(tmp_path / "prebuilt", "registry.example.test/tools:1.2")))
    assert prepared is not None
    _, root = split_root([Mount(tmp_path, "/app", writable=True), *prepared.mounts()])
    body = sandbox.manifest("sbx-10", ["true"], [], "/app", {}, Limits(), None, root=root)
    assert body["spec"]["image"] == "registry.example.test/tools:1.2" and "build" not in body["spec"]
    plain = TaskDir(hello_world(tmp_path / "plain"))
    (plain.root / "environment" / "Dockerfile").unlink()
    assert provider.prepare(plain) is None  # neither: the operator's default task image


def test_a_tasks_user_and_public_network_reach_its_runs_build_and_spec(sandbox: KubernetesSandbox, store: LocalStore,
                                                                     tmp_path: Path) -> None:
    import jsonschema
    import yaml
    from skillgym_core.contracts.task import TaskDir
    from skillgym_core.envbuild.cluster import ClusterImageProvider
    from skillgym_core.sandbox.kubernetes import split_root

    from tests.support.harbor_tasks import agent_user, prebuilt_image

    crd_path = Path(__file__).resolve().parents[3] / "charts/skillgym/crds/sandboxruns.skillgym.io.yaml"
    schema = yaml.safe_load(crd_path.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    task = TaskDir(agent_user(tmp_path / "user"))
    config = task.config_path.read_text().replace('network_mode = "no-network"', 'network_mode = "public"')
    task.config_path.write_text(config)
    provider = ClusterImageProvider(store)
    prepared = provider.prepare(task)
    assert prepared is not None and prepared.user == "agent" and prepared.network
    _, root = split_root(prepared.mounts())
    body = sandbox.manifest("sbx-11", ["true"], [], "/app", {}, Limits(), None, root=root)
    jsonschema.Draft4Validator(schema).validate(body)
    assert body["spec"]["build"] == {"contextKey": prepared.context_key, "user": "agent"}
    assert body["spec"]["network"] == "public"

    prebuilt = TaskDir(prebuilt_image(tmp_path / "prebuilt", "registry.example.test/tools:1.2"))
    prebuilt.config_path.write_text(prebuilt.config_path.read_text().replace("[agent]\n", '[agent]\nuser = "agent"\n'))
    on_base = provider.prepare(prebuilt)
    assert on_base is not None
    _, root = split_root(on_base.mounts())
    body = sandbox.manifest("sbx-12", ["true"], [], "/app", {}, Limits(), None, root=root)
    jsonschema.Draft4Validator(schema).validate(body)
    assert body["spec"]["build"] == {"baseImage": "registry.example.test/tools:1.2", "user": "agent"}
    assert body["spec"]["network"] == "public" and "image" not in body["spec"]  # Harbor's default: allow_internet
    unbuilt = ClusterImageProvider(store, build_images=False).prepare(prebuilt)
    assert unbuilt is not None and unbuilt.user is None and "not honoured" in unbuilt.warnings[0]
    _, root = split_root(unbuilt.mounts())
    assert sandbox.manifest("sbx-13", ["true"], [], "/app", {}, Limits(), None, root=root)["spec"]["image"] == (
        "registry.example.test/tools:1.2")
    root_task = TaskDir(agent_user(tmp_path / "root", user="root"))
    as_root = provider.prepare(root_task)
    assert as_root is not None and as_root.user is None and "unprivileged" in as_root.warnings[0]


def test_an_images_workdir_is_copied_out_through_one_pod(sandbox: KubernetesSandbox, tmp_path: Path,
                                                        node: SandboxNode) -> None:  # noqa: F811
    """The stand-in kubelet runs no images, so the "image" here is a read-only mount of files."""
    from skillgym_core.envbuild.cluster import PodWorkdirExporter

    image = tmp_path / "image-app"
    (image / "data").mkdir(parents=True)
    (image / "data" / "inventory.json").write_text('{"bolt": 3}')
    (image / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (image / "run.sh").chmod(0o755)
    exporter = PodWorkdirExporter(lambda: sandbox)
    dest = tmp_path / "workspace"
    dest.mkdir()
    assert exporter([Mount(image, "/image-app")], "/image-app", dest)
    assert (dest / "data" / "inventory.json").read_text() == '{"bolt": 3}'
    assert (dest / "run.sh").stat().st_mode & 0o111
    empty = tmp_path / "nothing"
    empty.mkdir()
    assert not exporter([Mount(image, "/image-app")], "/no/such/dir", empty)
    assert not any(empty.iterdir())


def test_every_pod_ships_the_confining_runner(sandbox: KubernetesSandbox, node: SandboxNode,  # noqa: F811
                                              tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    probe = ('echo "$SKILLGYM_RUN_UNTRUSTED"; "$SKILLGYM_RUN_UNTRUSTED" --timeout 10 -- sh -c'
             " 'echo confined > /app/inside.txt; echo forged > /logs/out.txt' 2>&1 | tail -1; ls /logs")
    logs = tmp_path / "logs"
    logs.mkdir()
    result = sandbox.run(["sh", "-c", probe], mounts=[Mount(workspace, "/app", writable=True),
                                                      Mount(logs, "/logs", writable=True)], limits=Limits(wall_s=30))
    assert result.outcome is Outcome.OK, result
    lines = result.stdout.splitlines()
    assert lines[0] == kubernetes_sandbox.RUNNER_PATH
    assert "Permission denied" in lines[1] and lines[2:] == [], result.stdout  # /logs stayed out of reach
    assert (workspace / "inside.txt").read_text() == "confined\n"


@pytest.mark.parametrize("attack", ["daemon_rewrites", "double_fork", "writes_locks_and_exits", "kills_the_checker"])
def test_code_a_checker_runs_unconfined_cannot_write_the_verdict_in_a_pod(
    sandbox: KubernetesSandbox, node: SandboxNode, tmp_path: Path, attack: str  # noqa: F811
) -> None:
    verdict = verdict_attacks.verdict_after(TaskRunner(sandbox, judge=None), tmp_path, attack, "8")
    verdict_attacks.assert_the_checkers_verdict(verdict, "8", attack)
