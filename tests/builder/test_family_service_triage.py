"""service-triage: a web service behind nginx with planted faults; the fixed configuration must
parse with crossplane and route correctly, the report must classify each cause with the skill's
failure classes. A skill that runs nginx gets nginx in its task: the reference solution reads and
confirms its fixes with the real ``nginx -t``, and the verifier runs nginx's syntax test too."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.service_assets import DEFAULT_CLASSES, nginx_directives
from skillgym_builder.families.service_triage import ServiceTriageFamily, classes_for
from skillgym_builder.families.skillfacts import vocabulary
from skillgym_builder.skillcard import SkillCard
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    read_json,
    rewrite_json,
)
from tests.builder.skills import FIXTURES

KNOBS = {"multi_step": 2, "error_recovery": 1, "distractor_files": 2, "noise_level": 0.3, "record_count": 400}


def triage_card() -> SkillCard:
    """The fixture skill, whose workflow has `nginx -t` run (ingest does not count nginx as a
    need: the skill also works from pasted output)."""
    return card_for("web-service-triage", "system-administration")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    return build(ServiceTriageFamily(), triage_card(), KNOBS, tmp_path_factory.mktemp("triage"), env_provider)


@pytest.fixture(scope="module")
def built_without_nginx(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    """The same instance for a skill that never runs nginx: its checks are crossplane's alone."""
    folder = tmp_path_factory.mktemp("skill") / "web-service-triage"
    shutil.copytree(FIXTURES / "web-service-triage", folder)
    skill_md = folder / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("`nginx -t`", "nginx's configuration test"))
    card = card_for("web-service-triage", "system-administration", folder=folder)
    return build(ServiceTriageFamily(), card, KNOBS, tmp_path_factory.mktemp("triage-parser"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_the_skills_failure_classes_are_read_and_mapped() -> None:
    fact = vocabulary(card_for("web-service-triage", None))
    assert fact is not None and "upstream unreachable" in fact.value  # type: ignore[operator]
    mapping = classes_for(list(fact.value), ["upstream_port", "syntax", "permission", "port_conflict"])  # type: ignore[call-overload]
    assert mapping == {"upstream_port": "upstream unreachable", "syntax": "config error",
                       "permission": "permission denied", "port_conflict": "port conflict"}
    assert classes_for(["crash", "timeout", "oom", "other"], ["syntax"]) is None
    assert classes_for(DEFAULT_CLASSES, ["permission"]) == {"permission": "permission denied"}


def test_the_healthy_site_reads_as_crossplane_reads_it() -> None:
    config = "server {\n    listen 80;\n    location / {\n        return 200 \"ok\";\n        proxy_pass http://x:1;\n    }\n}\n"
    assert nginx_directives(config) == [
        [[], "server", []], [["server"], "listen", ["80"]], [["server"], "location", ["/"]],
        [["server", "location", "/"], "return", ["200", "ok"]],
    ]


def test_task_conforms_and_the_broken_service_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    outcome = built.untouched()
    assert not outcome.passed and outcome.rewards["configuration"] < 1  # every check that reads nginx fails
    assert "syntax" in built.extra("planted_faults") and len(built.extra("planted_faults")) == 3
    assert (built.task.root / "environment" / "requirements.txt").read_text().startswith("crossplane")


def test_a_skill_that_runs_nginx_gets_nginx_and_its_solution_runs_it(built: BuiltTask) -> None:
    dockerfile = (built.task.root / "environment" / "Dockerfile").read_text()
    assert "apt-get install -y --no-install-recommends nginx" in dockerfile
    usage = built.extra("skill_usage")
    assert usage["kind"] == "tool" and usage["tools"] == ["nginx"], usage
    solve = (built.task.solution / "solve.sh").read_text()
    assert "nginx -t -e stderr -c /app/etc/nginx/nginx.conf" in solve
    assert "nginx is installed here too" in built.task.instruction()


def test_a_skill_that_never_runs_nginx_gets_the_parser_alone(built_without_nginx: BuiltTask) -> None:
    assert "nginx" not in (built_without_nginx.task.root / "environment" / "Dockerfile").read_text()
    assert built_without_nginx.extra("skill_usage")["kind"] == "skill_facts"
    assert "nginx -t -e" not in (built_without_nginx.task.solution / "solve.sh").read_text()
    ok, solved = built_without_nginx.solve()
    assert ok and built_without_nginx.verify(solved).passed


def _catch_all_with_a_bad_size(workspace: Path) -> None:
    """A plausible extra site: crossplane counts its arguments, only nginx reads the value."""
    (workspace / "etc/nginx/sites-enabled/catch-all.conf").write_text(
        "server {\n    listen 8081 default_server;\n    client_max_body_size 10mb;\n    return 444;\n}\n")


def test_nginx_rejects_what_the_parser_alone_accepts(built: BuiltTask, solved: Path,
                                                     built_without_nginx: BuiltTask) -> None:
    ok, parser_solved = built_without_nginx.solve()
    assert ok and built_without_nginx.verify_edited(parser_solved, _catch_all_with_a_bad_size).passed
    outcome = built.verify_edited(solved, _catch_all_with_a_bad_size)
    assert not outcome.passed and outcome.rewards["configuration"] < 1  # every check that reads nginx fails


def test_reference_and_alternative_fixes_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/move-the-app-port.sh")
    assert ok and built.verify(alternative).passed


def test_the_failure_classes_need_the_skill(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] and dependence["holds"], dependence
    assert "upstream unreachable" not in built.task.instruction()


def _edit_site(change: Any) -> Any:
    def edit(workspace: Path) -> None:
        site = next(p for p in (workspace / "etc/nginx/sites-enabled").glob("*.conf") if p.name != "status.conf")
        site.write_text(change(site.read_text()))

    return edit


def _proxy_to_health_port(text: str) -> str:
    health = re.search(r"listen 127\.0\.0\.1:(\d+);", text).group(1)  # type: ignore[union-attr]
    return re.sub(r"proxy_pass http://127\.0\.0\.1:\d+;", f"proxy_pass http://127.0.0.1:{health};", text)


def _wrong_class(value: dict[str, Any]) -> None:
    value["findings"][0]["cause"] = "dependency missing"


def _unit_as_root(workspace: Path) -> None:
    unit = next((workspace / "etc/systemd/system").glob("*.service"))
    unit.write_text(re.sub(r"^User=.*$", "User=root", unit.read_text(), flags=re.M))


def _syntax_error_left_in(workspace: Path) -> None:
    _edit_site(lambda t: t.replace("proxy_set_header Host $host;", "proxy_set_header Host $host"))(workspace)


@pytest.mark.parametrize(("name", "edit"), [
    ("security headers dropped in a rewrite", _edit_site(lambda t: re.sub(r"\n\s*add_header [^\n]*", "", t))),
    ("proxy sent to the health port", _edit_site(_proxy_to_health_port)),
    ("syntax error left in", _syntax_error_left_in),
    ("unit runs as root", _unit_as_root),
    ("cause named outside the skill's classes", rewrite_json("out/triage.json", _wrong_class)),
    ("a finding left out", rewrite_json("out/triage.json", lambda v: v["findings"].pop())),
    ("findings file names the logs", rewrite_json("out/triage.json",
                                                   lambda v: v["findings"][0].update(file="logs/nginx/error.log"))),
])
def test_wrong_but_plausible_fixes_are_rejected(built: BuiltTask, solved: Path, name: str, edit: Any) -> None:
    assert not built.verify_edited(solved, edit).passed, name


def test_findings_in_another_order_are_accepted(built: BuiltTask, solved: Path) -> None:
    outcome = built.verify_edited(solved, rewrite_json("out/triage.json", lambda v: v["findings"].reverse()))
    assert outcome.passed
    assert read_json(solved, "out/triage.json")["findings"]


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "service-triage")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "service-triage")
