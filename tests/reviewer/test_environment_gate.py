"""The reviewer's environment gate: Dockerfile lint findings and failed builds are
``environment_error``; a declared environment is built (real pip, local wheels) and every run
of the review uses it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from skillgym_core.contracts.events import EnvBuilt, EnvReviewed
from skillgym_core.envbuild import environment_provider
from skillgym_core.store.base import get_json
from skillgym_reviewer import ReviewerService
from skillgym_reviewer.settings import ReviewerSettings

from tests.builder.skills import make_context, wrap
from tests.reviewer import handmade
from tests.support.wheels import build_wheel

DOCKERFILE = """FROM python:3.11-slim
WORKDIR /app
COPY requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir -r /tmp/requirements.txt
COPY workspace/ /app/
COPY skills/ /skills/
"""
SOLVE_PY = """import csv, json, os
import tinyledger
rows = list(csv.DictReader(open("data.csv")))
os.makedirs("out", exist_ok=True)
json.dump(tinyledger.summary(rows), open("out/total.json", "w"))
"""
TINYLEDGER = """def summary(rows):
    return {"total": round(sum(float(r["amount"]) for r in rows), 2), "count": len(rows)}
"""


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    links = tmp_path_factory.mktemp("wheelhouse")
    build_wheel(links, "tinyledger", "1.0", {"tinyledger/__init__.py": TINYLEDGER})
    return links


def with_requirements(
    requirements: str = "tinyledger==1.0\n", dockerfile: str = DOCKERFILE
) -> Callable[[dict[str, str]], None]:
    def edit(files: dict[str, str]) -> None:
        files["environment/requirements.txt"] = requirements
        files["environment/Dockerfile"] = dockerfile
        files["solution/solve.py"] = SOLVE_PY

    return edit


def review(
    tmp_path: Path,
    wheelhouse: Path,
    name: str,
    edit: Callable[[dict[str, str]], None],
    *,
    cache: Path | None = None,
    **settings: object,
) -> tuple[EnvReviewed, dict]:  # type: ignore[type-arg]
    ctx = make_context(tmp_path)
    task = handmade.write_task(tmp_path / name, edit)
    key = ctx.save_task(f"task-{name}", task)
    config = ReviewerSettings(
        env_cache=cache or tmp_path / "env-cache",
        env_find_links=[str(wheelhouse)],
        env_no_index=True,
        **settings,  # type: ignore[arg-type]
    )
    event = EnvBuilt(task_id=f"task-{name}", skill_id="skill-ledger", package_key=key, template="handmade")
    reviewed = ReviewerService(ctx, config).handle(wrap(event))[0]
    assert isinstance(reviewed, EnvReviewed)
    report = get_json(ctx.store, reviewed.report_key)
    return reviewed, {gate["gate"]: gate for gate in report["gates"]}


def test_a_declared_environment_is_built_once_and_used_by_the_review(tmp_path: Path, wheelhouse: Path) -> None:
    reviewed, gates = review(tmp_path / "first", wheelhouse, "ledger", with_requirements(), cache=tmp_path / "cache")
    assert reviewed.approved, reviewed.reasons
    env = gates["environment"]["details"]
    assert env["requirements"] == ["tinyledger==1.0"] and env["cache_hit"] is False and env["target"] == "/opt/venv"
    assert gates["validity"]["passed"] and gates["validity"]["details"]["solved_reward"] == 1.0
    reviewed, gates = review(tmp_path / "second", wheelhouse, "ledger", with_requirements(), cache=tmp_path / "cache")
    assert reviewed.approved and gates["environment"]["details"]["cache_hit"] is True


def test_without_a_build_the_same_task_is_rejected(tmp_path: Path, wheelhouse: Path) -> None:
    reviewed, gates = review(tmp_path, wheelhouse, "ledger", with_requirements(), env_build=False)
    assert not reviewed.approved and reviewed.failure_type == "environment_error"
    assert "builds no environments" in " ".join(reviewed.reasons)
    assert "validity" not in gates


def test_lint_findings_are_environment_errors_with_reasons(tmp_path: Path, wheelhouse: Path) -> None:
    bad = "FROM python:latest\nWORKDIR /app\nRUN curl -sSL https://get.example.com | sh\nCOPY workspace/ /app/\nCOPY skills/ /skills/\nENV API_TOKEN=abc123\n"
    reviewed, gates = review(tmp_path, wheelhouse, "bad-docker", with_requirements(dockerfile=bad))
    assert not reviewed.approved and reviewed.failure_type == "environment_error"
    codes = {finding["code"] for finding in gates["environment"]["details"]["findings"]}
    assert codes == {"from_unpinned", "pipe_to_shell", "secret_in_env", "requirements_not_copied"}
    assert any("line 3" in reason and "pipes a download" in reason for reason in reviewed.reasons), reviewed.reasons
    assert list(gates) == ["conformance", "verifier_confinement", "environment"]


def test_a_failed_build_carries_the_pip_log(tmp_path: Path, wheelhouse: Path) -> None:
    reviewed, gates = review(tmp_path, wheelhouse, "no-such-version", with_requirements("tinyledger==9.9\n"))
    assert not reviewed.approved and reviewed.failure_type == "environment_error"
    [reason] = reviewed.reasons
    assert "pip_failed" in reason and "pip log tail" in reason and "tinyledger==9.9" in reason
    assert "tinyledger==9.9" in gates["environment"]["details"]["log_tail"]


def test_a_task_without_requirements_passes_the_gate_untouched(tmp_path: Path, wheelhouse: Path) -> None:
    reviewed, gates = review(tmp_path, wheelhouse, "plain", lambda files: None)
    assert reviewed.approved, reviewed.reasons
    assert gates["environment"]["passed"] and gates["environment"]["details"] == {"requirements": []}
    assert not (tmp_path / "env-cache").exists()


def test_environments_are_built_for_the_local_sandbox_only(tmp_path: Path) -> None:
    from skillgym_core.envbuild.cluster import ClusterImageProvider

    settings = ReviewerSettings(env_cache=tmp_path, store_root=tmp_path / "store")
    assert environment_provider(settings, "local") is not None
    on_cluster = environment_provider(settings, "kubernetes")  # prebuilt images only: no registry to build into
    assert isinstance(on_cluster, ClusterImageProvider) and not on_cluster.build_images
    assert environment_provider(ReviewerSettings(env_build=False), "local") is None
