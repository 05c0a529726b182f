"""Tasks written for Harbor alone are read as they are: SkillGym metadata derived, Harbor's
network keys and defaults, Harbor's optional tables and solution; and a task SkillGym writes
still conforms after Harbor re-saves it with ``network_mode`` instead of ``allow_internet``."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomli_w
from skillgym_core.conformance import check_task
from skillgym_core.contracts.task import TaskConfig, TaskDir

from tests.reviewer import handmade
from tests.support.harbor_tasks import harbor_suite


@pytest.fixture
def suite(tmp_path: Path) -> dict[str, Path]:
    return harbor_suite(tmp_path)


def test_every_harbor_task_conforms_unchanged(suite: dict[str, Path]) -> None:
    assert {name: check_task(root) for name, root in suite.items()} == {name: [] for name in suite}


def test_skillgym_metadata_is_derived_and_harbor_keys_kept(suite: dict[str, Path]) -> None:
    hello = TaskDir(suite["hello-world"]).config()
    assert hello.is_harbor and hello.task.name == "local/hello-world" and hello.schema_version == "1.0"
    assert hello.metadata.task_id == "harbor-local-hello-world" and hello.metadata.labels == ["harbor"]
    assert hello.metadata.difficulty == "easy" and hello.metadata.category == "programming"
    assert (hello.metadata.model_extra or {})["harbor_metadata"]["author_name"] == "Test Author"
    inventory = TaskDir(suite["apt-inventory"]).config()
    assert inventory.task.name == "tests/apt-inventory" and inventory.metadata.task_id == "harbor-tests-apt-inventory"


@pytest.mark.parametrize(("environment", "network"), [
    ({}, "public"), ({"allow_internet": False}, "no-network"), ({"allow_internet": True}, "public"),
    ({"network_mode": "no-network", "allow_internet": True}, "no-network"),
    ({"network_mode": "allowlist", "allowed_hosts": ["pypi.org"]}, "allowlist"),
])
def test_the_network_policy_is_resolved_as_harbor_does(environment: dict[str, object], network: str) -> None:
    config = TaskConfig.model_validate({"environment": environment}, context={"folder": "t"})
    assert config.environment.network == network and config.environment.offline is (network == "no-network")


def test_an_unknown_network_mode_is_refused(tmp_path: Path) -> None:
    root = harbor_suite(tmp_path)["apt-inventory"]
    text = (root / "task.toml").read_text().replace('"no-network"', '"everything"')
    (root / "task.toml").write_text(text)
    assert "config_contract" in {issue.code for issue in check_task(root)}


def test_a_skillgym_task_re_saved_by_harbor_still_conforms(tmp_path: Path) -> None:
    root = handmade.write_task(tmp_path / "t").root
    data = tomllib.loads((root / "task.toml").read_text())
    del data["environment"]["allow_internet"]
    data["environment"]["network_mode"] = "no-network"
    (root / "task.toml").write_text(tomli_w.dumps(data))
    assert check_task(root) == []
    data["environment"]["network_mode"] = "public"
    (root / "task.toml").write_text(tomli_w.dumps(data))
    assert {issue.code for issue in check_task(root)} == {"network"}  # SkillGym's own tasks stay offline


def test_harbor_tasks_keep_their_written_fields_honest(tmp_path: Path) -> None:
    root = harbor_suite(tmp_path)["hello-world"]
    (root / "task.toml").write_text((root / "task.toml").read_text().replace("timeout_sec = 120.0", "timeout_sec = 0", 1))
    assert "timeout" in {issue.code for issue in check_task(root)}


def test_the_local_runtime_says_which_harbor_tasks_it_cannot_run(suite: dict[str, Path], tmp_path: Path) -> None:
    from skillgym_core.envbuild import EnvironmentBuildError, LocalVenvProvider
    from skillgym_core.envbuild.venv import host_unsupported_instructions

    assert host_unsupported_instructions(TaskDir(suite["hello-world"])) == []  # FROM and WORKDIR only
    unsupported = host_unsupported_instructions(TaskDir(suite["apt-inventory"]))
    assert [line.split(": ")[1].split()[0] for line in unsupported] == ["RUN", "COPY", "ENV"]
    with pytest.raises(EnvironmentBuildError) as caught:
        LocalVenvProvider(tmp_path / "cache").prepare(TaskDir(suite["apt-inventory"]))
    assert caught.value.reason == "needs_container" and len(caught.value.details["instructions"]) == 3
    skillgym_task = handmade.write_task(tmp_path / "own")
    assert host_unsupported_instructions(skillgym_task) == []  # SkillGym's own Dockerfiles copy their workspace


def test_a_skillgym_task_needing_a_system_package_the_host_lacks_is_refused_locally(tmp_path: Path) -> None:
    from skillgym_core.envbuild import EnvironmentBuildError, LocalVenvProvider
    from skillgym_core.envbuild.dockerparse import parse_dockerfile
    from skillgym_core.envbuild.hostpackages import apt_packages, missing_on_host
    from skillgym_core.envbuild.venv import host_unsupported_instructions

    lines = parse_dockerfile("FROM python:3.11-slim\nRUN apt-get update && apt-get install -y --no-install-recommends "
                             "git jq=1.6-2 \\\n  skillgym-no-such-tool && rm -rf /var/lib/apt/lists/*\nRUN apt install -q bash\n")
    assert apt_packages(lines) == ["bash", "git", "jq", "skillgym-no-such-tool"]
    assert missing_on_host(["bash", "skillgym-no-such-tool"]) == ["skillgym-no-such-tool"]
    task = handmade.write_task(tmp_path / "own")
    dockerfile = task.root / "environment" / "Dockerfile"
    text = dockerfile.read_text()
    dockerfile.write_text(text.replace("WORKDIR", "RUN apt-get install -y bash\nWORKDIR", 1))
    assert host_unsupported_instructions(task) == []  # the host has it: the fast path serves
    dockerfile.write_text(text.replace("WORKDIR", "RUN apt-get install -y skillgym-no-such-tool\nWORKDIR", 1))
    assert host_unsupported_instructions(task) == ["system packages this host lacks: skillgym-no-such-tool"]
    with pytest.raises(EnvironmentBuildError) as caught:
        LocalVenvProvider(tmp_path / "cache").prepare(task)
    assert caught.value.reason == "needs_container"


def test_harbors_env_tables_reach_their_phases_and_never_the_hosts_variables(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from skillgym_core.sandbox.local import LocalSandbox
    from skillgym_core.taskrun import TaskRunner

    monkeypatch.setenv("HOST_SECRET", "s3cr3t")
    root = harbor_suite(tmp_path)["hello-world"]
    data = tomllib.loads((root / "task.toml").read_text())
    data["environment"]["env"] = {"GREETING": "${GREETING_OVERRIDE:-hi}", "LEAK": "${HOST_SECRET}"}
    data["verifier"]["env"] = {"EXPECTED": "Hello, world!"}
    data["solution"] = {"env": {"MODE": "oracle"}}
    (root / "task.toml").write_text(tomli_w.dumps(data))
    (root / "solution" / "solve.sh").write_text('#!/bin/bash\necho "$MODE $GREETING [$LEAK] [$EXPECTED]" > seen.txt\n'
                                                'echo "Hello, world!" > hello.txt\n')
    (root / "tests" / "test.sh").write_text('#!/bin/bash\n[ "$(cat /app/hello.txt)" = "$EXPECTED" ] && [ "$GREETING" = hi ]'
                                            ' && [ -z "$MODE" ] && echo 1 > /logs/verifier/reward.txt'
                                            ' || echo 0 > /logs/verifier/reward.txt\n')
    config = TaskDir(root).config()
    assert config.env_for("agent") == {"GREETING": "hi", "LEAK": ""}
    assert config.env_for("solution") == {"GREETING": "hi", "LEAK": "", "MODE": "oracle"}
    runner = TaskRunner(LocalSandbox(), judge=None)
    task = TaskDir(root)
    workspace = runner.fresh_workspace(task, tmp_path)
    assert runner.run_agent_command(task, workspace, 'echo "$GREETING [$MODE] [$EXPECTED]"').stdout == "hi [] []\n"
    assert runner.run_solution(task, workspace).ok
    assert (workspace / "seen.txt").read_text() == "oracle hi [] []\n"  # no verifier variable, no host secret
    assert runner.verify(task, workspace).passed


def test_a_prebuilt_image_stands_for_the_dockerfile_and_compose_is_refused(tmp_path: Path) -> None:
    from skillgym_core.envbuild.venv import host_unsupported_instructions

    from tests.support.harbor_tasks import prebuilt_image

    task = prebuilt_image(tmp_path / "prebuilt", "ghcr.io/example/hello:1")
    assert check_task(task) == [] and TaskDir(task).check_layout() == []
    assert TaskDir(task).config().environment.docker_image == "ghcr.io/example/hello:1"
    assert host_unsupported_instructions(TaskDir(task)) == ["docker_image: ghcr.io/example/hello:1 (a prebuilt image)"]
    (task / "environment" / "docker-compose.yaml").write_text("services:\n  main:\n    build: .\n")
    assert [issue.code for issue in check_task(task)] == ["compose_environment"]
