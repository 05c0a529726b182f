"""Harbor-format tasks, unchanged, validated on the container sandbox: the Dockerfile (a base the
machine lacks, apt packages, inputs copied into the image, ``ENV``) is the environment, Harbor's
network keys decide whether runs are online, several rewards are read from ``reward.json``, and a
task without a solution is left unvalidated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from skillgym_core.contracts.task import AGENT_WORKDIR, TaskDir
from skillgym_core.envbuild.image import ImageProvider
from skillgym_core.sandbox.base import Mount
from skillgym_core.sandbox.container.backend import ContainerSandbox
from skillgym_core.taskrun import TaskRunner
from skillgym_validator.settings import ValidatorSettings
from skillgym_validator.validation import validate_task_dirs

from tests.support.harbor_tasks import agent_user, harbor_suite, hello_world
from tests.support.podman import PodmanService

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.deferred_service]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return harbor_suite(tmp_path_factory.mktemp("harbor"))


@pytest.fixture(scope="module")
def sandbox(podman: PodmanService) -> ContainerSandbox:
    return ContainerSandbox(engine_url=podman.url)


@pytest.fixture(scope="module")
def images(sandbox: ContainerSandbox) -> ImageProvider:
    return ImageProvider(sandbox.client)


@pytest.fixture(scope="module")
def runner(sandbox: ContainerSandbox, images: ImageProvider) -> TaskRunner:
    return TaskRunner(sandbox, environment=images, judge=None)


def test_the_suite_validates_unchanged(suite: dict[str, Path], podman: PodmanService, tmp_path: Path) -> None:
    settings = ValidatorSettings(sandbox="container", container_engine_url=podman.url, env_cache=tmp_path / "cache")
    records = {Path(r["path"]).name: r for r in validate_task_dirs(list(suite.values()), settings)}
    assert records["hello-world"]["valid"], records["hello-world"]
    assert records["apt-inventory"]["valid"], records["apt-inventory"]
    assert records["log-steps"]["valid"], records["log-steps"]  # two steps in /workspace, on one container image
    assert records["agent-user"]["valid"], records["agent-user"]  # the key only the image's agent user may read
    assert records["hello-world"]["task_id"] == "harbor-local-hello-world"
    assert not records["no-solution"]["valid"] and records["no-solution"]["reasons"] == ["no_solution"]


def test_inputs_the_dockerfile_copies_reach_the_workspace(suite: dict[str, Path], runner: TaskRunner,
                                                          tmp_path: Path) -> None:
    task = TaskDir(suite["apt-inventory"])
    workspace = runner.fresh_workspace(task, tmp_path)
    assert '"anchor"' in (workspace / "inventory.json").read_text()
    assert runner.verify(task, workspace).rewards == {"names": 0.0, "order": 0.0}
    (workspace / "low-stock.txt").write_text("bolt\nanchor\n")  # the right names, in the wrong order
    outcome = runner.verify(task, workspace)
    assert outcome.rewards == {"names": 1.0, "order": 0.0} and outcome.reward == 0.5 and not outcome.passed


def _interfaces(runner: TaskRunner, task: TaskDir, workspace: Path) -> list[str]:
    mounts, env = runner.environment_extras(task)
    result = runner.sandbox.run(["cat", "/proc/net/dev"], mounts=[Mount(workspace, AGENT_WORKDIR, writable=True),
                                                                 *mounts], workdir=AGENT_WORKDIR, env=env)
    return [line.split(":")[0].strip() for line in result.stdout.splitlines()[2:]]


def test_runs_are_online_only_where_the_task_allows_it(suite: dict[str, Path], runner: TaskRunner,
                                                       tmp_path: Path) -> None:
    offline = TaskDir(suite["apt-inventory"])  # network_mode = "no-network"
    online = TaskDir(suite["hello-world"])  # Harbor's default: the internet is allowed
    assert _interfaces(runner, offline, runner.fresh_workspace(offline, tmp_path)) == ["lo"]
    assert len(_interfaces(runner, online, runner.fresh_workspace(online, tmp_path))) > 1
    # an allowlist cannot be enforced per host by the engine: such a task gets no network at all
    listed = hello_world(tmp_path / "allowlisted")
    (listed / "task.toml").write_text((listed / "task.toml").read_text().replace(
        "[environment]\n", '[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n'))
    assert _interfaces(runner, TaskDir(listed), runner.fresh_workspace(TaskDir(listed), tmp_path)) == ["lo"]


def test_a_prebuilt_image_runs_the_task_and_one_that_cannot_be_had_is_typed(podman: PodmanService,
                                                                            tmp_path: Path) -> None:
    from skillgym_core.sandbox.container.images import PYTHON_BASE

    from tests.support.harbor_tasks import prebuilt_image

    settings = ValidatorSettings(sandbox="container", container_engine_url=podman.url, env_cache=tmp_path / "cache")
    here = prebuilt_image(tmp_path / "here", PYTHON_BASE)
    absent = prebuilt_image(tmp_path / "absent", "localhost/skillgym-tests/absent:1")  # never pulled: a local-only name
    records = {Path(r["path"]).name: r for r in validate_task_dirs([here, absent], settings)}
    assert records["here"]["valid"], records["here"]
    assert not records["absent"]["valid"] and "base_image_unavailable" in json.dumps(records["absent"])


def _shell(runner: TaskRunner, task: TaskDir, workspace: Path, script: str) -> str:
    mounts, env = runner.environment_extras(task)
    result = runner.sandbox.run(["sh", "-c", script], mounts=[Mount(workspace, AGENT_WORKDIR, writable=True), *mounts],
                                workdir=AGENT_WORKDIR, env=env)
    return result.stdout.strip()


def test_the_agent_runs_as_the_user_the_task_names_on_the_sandbox_uid(suite: dict[str, Path], runner: TaskRunner,
                                                                      images: ImageProvider, tmp_path: Path) -> None:
    task = TaskDir(suite["agent-user"])
    workspace = runner.fresh_workspace(task, tmp_path)
    identity = _shell(runner, task, workspace, "id; echo $HOME; cat /opt/notes/key.txt; cat /opt/root-only.txt || echo denied")
    # the image's agent user, moved to the sandbox's uid, with no supplementary group; root's files stay closed
    assert identity.splitlines() == ["uid=2000000(agent) gid=2000000(agent) groups=2000000(agent)", "/home/agent",
                                     "k-7431", "denied"]
    environment = images.prepare(task)
    assert environment is not None and not [w for w in environment.warnings if "user" in w]


def test_root_is_never_honoured_and_an_absent_user_is_a_typed_build_failure(runner: TaskRunner, images: ImageProvider,
                                                                           tmp_path: Path) -> None:
    from skillgym_core.envbuild.provider import EnvironmentBuildError

    as_root = TaskDir(agent_user(tmp_path / "as-root", user="root"))
    environment = images.prepare(as_root)
    assert environment is not None and any("unprivileged" in w for w in environment.warnings)
    assert _shell(runner, as_root, runner.fresh_workspace(as_root, tmp_path), "id -u; cat /opt/notes/key.txt || echo denied"
                  ).splitlines() == ["2000000", "denied"]
    with pytest.raises(EnvironmentBuildError) as failure:
        images.prepare(TaskDir(agent_user(tmp_path / "absent", user="nobody-here")))
    assert failure.value.reason == "environment_build_failed"
    assert "nobody-here is not in the image's /etc/passwd" in failure.value.log_tail
