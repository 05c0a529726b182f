"""Task environments: requirements, the Dockerfile linter, the cached venv builder (real pip
installs from local wheels, no index) and the task runner mounting the result in the sandbox."""

from __future__ import annotations

import statistics
import threading
import time
from pathlib import Path

import pytest
from skillgym_core.contracts.task import TaskDir
from skillgym_core.envbuild import (
    ENV_MOUNT,
    EnvironmentBuildError,
    LocalVenvProvider,
    PipSource,
    RequirementsError,
    declared_requirements,
    lint_dockerfile,
    lint_environment,
    parse_requirements,
)
from skillgym_core.envbuild.venv import MANIFEST
from skillgym_core.sandbox.base import Outcome
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.taskrun import TaskRunner

from tests.support.wheels import build_sdist, build_wheel
from tests.validator.tasks import make_task

GOOD_DOCKERFILE = """FROM python:3.11-slim
WORKDIR /app
COPY requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir -r /tmp/requirements.txt
COPY workspace/ /app/
COPY skills/ /skills/
"""


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    links = tmp_path_factory.mktemp("wheelhouse")
    build_wheel(
        links, "tinycalc", "1.0",
        {"tinycalc/__init__.py": "def add(a, b):\n    return a + b + 1000\n\ndef main():\n    print('tinycalc', add(1, 2))\n"},
        console_scripts={"tinycalc-add": "tinycalc:main"}, requires=["tinyhelper>=0.1"],
    )  # fmt: skip
    build_wheel(links, "tinyhelper", "0.2", {"tinyhelper.py": "NAME = 'helper'\n"})
    return links


def provider(cache: Path, wheelhouse: Path, **kwargs: object) -> LocalVenvProvider:
    return LocalVenvProvider(cache, source=PipSource(find_links=(str(wheelhouse),), no_index=True), **kwargs)  # type: ignore[arg-type]


# -- requirements -------------------------------------------------------------------------


def test_requirements_are_normalised_and_sorted() -> None:
    parsed = parse_requirements(
        "# tools\nTiny_Calc >= 1.0  # pinned\n\nsix==1.16.0\nrequests[socks]; python_version>'3'\n"
    )
    assert parsed.lines == ('requests[socks]; python_version > "3"', "six==1.16.0", "tiny-calc>=1.0")
    assert (
        parsed.key()
        == parse_requirements("six==1.16.0\nrequests[socks] ; python_version > '3'\ntiny-calc>=1.0\n").key()
    )
    assert parsed.key() != parse_requirements("six==1.16.0\n").key()


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("--index-url http://evil/simple\nsix\n", "pip options"),
        ("-r other.txt\n", "pip options"),
        ("six @ https://example.com/six.whl\n", "direct URL"),
        ("six\nSix==1\n", "listed twice"),
        ("not a requirement!!\n", "requirements.txt:1"),
    ],
)
def test_bad_requirements_are_rejected(text: str, fragment: str) -> None:
    with pytest.raises(RequirementsError, match=fragment) as info:
        parse_requirements(text)
    assert info.value.reason == "requirements_invalid"


def test_a_task_without_requirements_declares_none(tmp_path: Path) -> None:
    task = make_task(tmp_path / "t")
    assert declared_requirements(task) is None
    (task.root / "environment" / "requirements.txt").write_text("# nothing\n")
    assert declared_requirements(task) is None


# -- Dockerfile lint ----------------------------------------------------------------------


def test_a_consistent_dockerfile_has_no_findings() -> None:
    assert lint_dockerfile(GOOD_DOCKERFILE, requirements_declared=True, requirements_present=True) == []
    json_form = 'FROM ghcr.io/acme/base:1.2 AS build\nWORKDIR /work\nCOPY ["requirements.txt", "./"]\nRUN ["python3", "-m", "pip", "install", "-r", "requirements.txt"]\n'
    assert lint_dockerfile(json_form, requirements_declared=True, requirements_present=True) == []


@pytest.mark.parametrize(
    ("dockerfile", "code"),
    [
        ("WORKDIR /app\n", "from_missing"),
        ("FROM python\nWORKDIR /app\n", "from_unpinned"),
        ("FROM python:latest\nWORKDIR /app\n", "from_unpinned"),
        ("FROM evil.example.com/python:3.11\nWORKDIR /app\n", "from_registry"),
        ("FROM python:3.11-slim\nCOPY workspace/ /app/\n", "workdir_missing"),
        ("FROM python:3.11-slim\nWORKDIR /app\nCOPY . /\n", "copy_context"),
        ("FROM python:3.11-slim\nWORKDIR /app\nADD https://example.com/x.tgz /opt/\n", "add_remote"),
        ("FROM python:3.11-slim\nWORKDIR /app\nRUN curl -fsSL https://x.sh/i \\\n    | sudo bash\n", "pipe_to_shell"),
        ('FROM python:3.11-slim\nWORKDIR /app\nRUN sh -c "$(wget -qO- https://x.sh)"\n', "pipe_to_shell"),
        ("FROM python:3.11-slim\nWORKDIR /app\nCOPY skills/ /app/skills/\n", "skills_target"),
        ("FROM python:3.11-slim\nWORKDIR /root\nCOPY skills .claude/skills\nCOPY skills ./notes/\n", "skills_target"),
        ("FROM python:3.11-slim\nWORKDIR /app\nENV OPENAI_API_KEY=sk-live-123\n", "secret_in_env"),
        ("FROM python:3.11-slim\nWORKDIR /app\nENV HELPER_URL sk-abcdefghijklmnopqrstuvwx\n", "secret_in_env"),
        ("FROM python:3.11-slim\nWORKDIR /app\nARG DB_PASSWORD=hunter2\n", "secret_in_env"),
        ("FROM python:3.11-slim\nWORKDIR /app\nRUN pip install --no-cache-dir numpy==1.26.4\n", "undeclared_install"),
        (
            "FROM python:3.11-slim\nWORKDIR /app\nCOPY requirements.txt /tmp/\nRUN pip install -r /tmp/requirements.txt\n",
            "requirements_missing",
        ),
    ],
)
def test_each_rule_finds_its_problem(dockerfile: str, code: str) -> None:
    codes = [finding.code for finding in lint_dockerfile(dockerfile)]
    assert code in codes, codes


def test_declared_requirements_must_be_copied_and_installed() -> None:
    not_copied = "FROM python:3.11-slim\nWORKDIR /app\n"
    assert [f.code for f in lint_dockerfile(not_copied, requirements_declared=True)] == ["requirements_not_copied"]
    not_installed = (
        "FROM python:3.11-slim\nWORKDIR /app\nCOPY requirements.txt /opt/req.txt\nRUN pip install -r requirements.txt\n"
    )
    findings = lint_dockerfile(not_installed, requirements_declared=True, requirements_present=True)
    assert [f.code for f in findings] == ["requirements_not_installed"]
    relative = "FROM python:3.11-slim\nWORKDIR /opt\nCOPY requirements.txt req.txt\nRUN pip3 install -r /opt/req.txt\n"
    assert lint_dockerfile(relative, requirements_declared=True, requirements_present=True) == []


def test_secret_references_and_plain_values_pass() -> None:
    text = (
        "ARG BASE=python:3.11-slim\nFROM ${BASE}\nWORKDIR /app\nENV TOKEN_FILE=$HOME/.token LANG=C.UTF-8\nARG API_KEY\n"
    )
    assert lint_dockerfile(text) == []


def test_lint_environment_reads_the_task(tmp_path: Path) -> None:
    task = make_task(tmp_path / "t")
    assert lint_environment(task) == []
    (task.root / "environment" / "requirements.txt").write_text("tinycalc==1.0\n")
    assert [f.code for f in lint_environment(task)] == ["requirements_not_copied"]
    (task.root / "environment" / "requirements.txt").write_text("--extra-index-url http://x\n")
    assert "requirements_invalid" in [f.code for f in lint_environment(task)]


# -- the cached venv builder ---------------------------------------------------------------


def test_a_module_that_does_not_compile_does_not_fail_the_build(tmp_path: Path) -> None:
    """Packages ship such modules (torch's tests in a later Python's syntax, old Python 2 files);
    they stay uncompiled."""
    links = tmp_path / "links"
    build_wheel(links, "futuresyntax", "1.0", {"futuresyntax/__init__.py": "VALUE = 1\n",
                                               "futuresyntax/later.py": "print 'python 2'\n"})
    built = provider(tmp_path / "cache", links).ensure(parse_requirements("futuresyntax==1.0\n"))
    site = next((built.host_path / "lib").glob("python3*/site-packages"))
    assert list((site / "futuresyntax" / "__pycache__").glob("__init__.*.pyc"))
    assert not list((site / "futuresyntax" / "__pycache__").glob("later.*.pyc"))


def test_build_then_cache_hit(tmp_path: Path, wheelhouse: Path) -> None:
    envs = provider(tmp_path / "cache", wheelhouse)
    requirements = parse_requirements("tinycalc==1.0\n")
    built = envs.ensure(requirements)
    assert not built.cache_hit and built.build_seconds > 0
    assert built.host_path == tmp_path / "cache" / "envs" / built.key
    assert (built.host_path / MANIFEST).is_file()
    site = next((built.host_path / "lib").glob("python3*/site-packages"))
    assert (site / "tinycalc" / "__init__.py").is_file() and (site / "tinyhelper.py").is_file()
    script = (built.host_path / "bin" / "tinycalc-add").read_text()
    assert f"{ENV_MOUNT}/bin/python" in "".join(script.splitlines()[:2]) and str(tmp_path) not in script
    assert str(tmp_path) not in (built.host_path / "pyvenv.cfg").read_text()
    assert not list((tmp_path / "cache" / "tmp").iterdir())

    hits = []
    for _ in range(10):
        started = time.perf_counter()
        again = envs.ensure(requirements)
        hits.append(time.perf_counter() - started)
        assert again.cache_hit and again.host_path == built.host_path
    assert statistics.median(hits) < 0.05, hits
    assert provider(tmp_path / "cache", wheelhouse).ensure(requirements).cache_hit  # a new process view


def test_concurrent_builds_of_one_key_build_once(tmp_path: Path, wheelhouse: Path) -> None:
    envs = provider(tmp_path / "cache", wheelhouse)
    requirements = parse_requirements("tinyhelper\n")
    results: list[object] = []

    def build() -> None:
        try:
            results.append(envs.ensure(requirements))
        except Exception as exc:  # collected and asserted below
            results.append(exc)

    threads = [threading.Thread(target=build) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(not isinstance(r, Exception) for r in results), results
    assert sorted(r.cache_hit for r in results) == [False, True, True, True]  # type: ignore[attr-defined]
    assert len({r.host_path for r in results}) == 1  # type: ignore[attr-defined]
    assert len(list((tmp_path / "cache" / "envs").iterdir())) == 1


def test_a_failed_build_reports_the_pip_log(tmp_path: Path, wheelhouse: Path) -> None:
    envs = provider(tmp_path / "cache", wheelhouse)
    with pytest.raises(EnvironmentBuildError) as info:
        envs.ensure(parse_requirements("tinycalc==9.9\n"))
    assert info.value.reason == "pip_failed"
    assert "tinycalc==9.9" in info.value.log_tail
    assert not list((tmp_path / "cache" / "envs").iterdir())
    assert not list((tmp_path / "cache" / "tmp").iterdir())


def test_nothing_a_package_ships_runs_on_the_host(tmp_path: Path) -> None:
    links = tmp_path / "links"
    marker_sdist, marker_pth = tmp_path / "sdist-ran", tmp_path / "pth-ran"
    build_sdist(
        links,
        "buildtime",
        "1.0",
        f"open({str(marker_sdist)!r}, 'w').write('ran')\nfrom setuptools import setup\nsetup()\n",
    )
    build_wheel(
        links,
        "startup",
        "1.0",
        {"startup.pth": f"import os; open({str(marker_pth)!r}, 'w').write('ran')\n", "startup_mod.py": "X = 1\n"},
    )
    envs = provider(tmp_path / "cache", links)
    with pytest.raises(EnvironmentBuildError, match="pip"):
        envs.ensure(parse_requirements("buildtime\n"))
    built = envs.ensure(parse_requirements("startup\n"))
    assert (next((built.host_path / "lib").glob("python3*/site-packages")) / "startup.pth").is_file()
    assert not marker_sdist.exists() and not marker_pth.exists()


def test_a_build_that_overruns_its_timeout_fails(tmp_path: Path, wheelhouse: Path) -> None:
    envs = provider(tmp_path / "cache", wheelhouse)
    with pytest.raises(EnvironmentBuildError) as info:
        envs.ensure(parse_requirements("tinycalc\n"), timeout_s=0.05)
    assert info.value.reason == "build_timeout"
    assert not list((tmp_path / "cache" / "envs").iterdir())


# -- the task runner with an environment ---------------------------------------------------

USES_PACKAGE_SOLVE = """#!/bin/bash
set -e
read a b < /app/input.txt
python3 -c "import tinycalc; print(tinycalc.add($a, $b))" > /app/answer.txt
tinycalc-add > /app/script.txt
"""
USES_PACKAGE_TEST = """#!/bin/bash
python3 - <<'PY'
import tinycalc, tinyhelper
ok = open("/app/answer.txt").read().strip() == str(tinycalc.add(3, 4)) and tinyhelper.NAME == "helper"
open("/logs/verifier/reward.txt", "w").write("1" if ok else "0")
PY
"""


def package_task(root: Path, requirements: str = "tinycalc==1.0\n") -> TaskDir:
    task = make_task(root, solve_sh=USES_PACKAGE_SOLVE, test_sh=USES_PACKAGE_TEST)
    (task.root / "environment" / "requirements.txt").write_text(requirements)
    return task


def test_solution_agent_and_verifier_run_with_the_environment(tmp_path: Path, wheelhouse: Path) -> None:
    task = package_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox(), environment=provider(tmp_path / "cache", wheelhouse))
    workspace = runner.fresh_workspace(task, tmp_path)
    solved = runner.run_solution(task, workspace)
    assert solved.ok, solved.stderr
    assert (workspace / "answer.txt").read_text().strip() == "1007"
    assert (workspace / "script.txt").read_text().strip() == "tinycalc 1003"
    outcome = runner.verify(task, workspace)
    assert outcome.passed, outcome.to_dict()
    agent = runner.run_agent_command(
        task,
        workspace,
        "echo $VIRTUAL_ENV; python3 -c 'import tinycalc'; touch /opt/venv/x",
        env={"PATH": "/usr/bin:/bin"},
    )
    assert agent.stdout.splitlines()[0] == ENV_MOUNT
    assert "Read-only file system" in agent.stderr and "ModuleNotFoundError" not in agent.stderr


def test_without_the_environment_the_same_task_fails(tmp_path: Path) -> None:
    task = package_task(tmp_path / "task")
    runner = TaskRunner(LocalSandbox())
    workspace = runner.fresh_workspace(task, tmp_path)
    solved = runner.run_solution(task, workspace)
    assert not solved.ok and "ModuleNotFoundError" in solved.stderr


def test_an_unbuildable_environment_fails_every_run_with_its_reason(tmp_path: Path, wheelhouse: Path) -> None:
    task = package_task(tmp_path / "task", requirements="tinycalc==9.9\n")
    runner = TaskRunner(LocalSandbox(), environment=provider(tmp_path / "cache", wheelhouse))
    workspace = runner.fresh_workspace(task, tmp_path)
    solved = runner.run_solution(task, workspace)
    assert solved.outcome is Outcome.SANDBOX_ERROR and solved.detail["reason"] == "environment_error"
    assert "pip_failed" in solved.stderr and "tinycalc==9.9" in solved.stderr
    outcome = runner.verify(task, workspace)
    assert outcome.failure_type == "environment_error" and not outcome.passed
    assert "tinycalc==9.9" in outcome.to_dict()["detail"]  # type: ignore[operator]
