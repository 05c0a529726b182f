"""Builder agent and reviewer through scripted OpenAI-compatible servers (real HTTP): each defect
is caught with its type, fed back, and the revision is approved."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder import BuilderService, BuilderSettings
from skillgym_builder.errors import LLMRequiredError
from skillgym_builder.fallback import fallback_record_key
from skillgym_builder.families import registry as family_registry
from skillgym_builder.families.base import family_text
from skillgym_builder.service import skill_build_report_key
from skillgym_core import keys
from skillgym_core.conformance import check_task
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import EnvBuilt, EnvFeedback, EnvReviewed, Payload, SkillIngested
from skillgym_core.store.base import get_json
from skillgym_reviewer import ReviewerService, ReviewerSettings

from skillgym.summary import read_build_reports, summarize, write_pipeline_funnel
from tests.builder import llm_scripts
from tests.builder.skills import FIXTURES, make_context, put_skill, wrap
from tests.support.scripted_llm import ScriptedLLMServer, Sequence, assistant, tool_call
from tests.support.services import free_port

pytestmark = pytest.mark.integration


def _services(tmp_path: Path, builder_url: str, reviewer_url: str | None):  # type: ignore[no-untyped-def]
    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(builder_llm_base_url=builder_url))
    reviewer = ReviewerService(ctx, ReviewerSettings(reviewer_llm_base_url=reviewer_url))
    return ctx, builder, reviewer


@pytest.mark.parametrize("defect", sorted(llm_scripts.DEFECTS))
def test_defect_is_caught_typed_fed_back_and_the_revision_approved(tmp_path: Path, defect: str) -> None:
    with ScriptedLLMServer(llm_scripts.builder_model(defect)) as bsrv, ScriptedLLMServer(llm_scripts.reviewer_model()) as rsrv:
        ctx, builder, reviewer = _services(tmp_path, bsrv.base_url, rsrv.base_url)
        built = builder.handle(wrap(put_skill(ctx.store, FIXTURES / "ledger-basics")))
        assert len(built) == 1 and isinstance(built[0], EnvBuilt)
        first = built[0]
        assert first.builder == "llm"
        with ctx.task_checkout(first.package_key) as task:
            assert [i for i in check_task(task.root) if i.code != "hidden_file_copied"] == []

        verdict = reviewer.handle(wrap(first))
        reviewed, feedback = verdict
        assert isinstance(reviewed, EnvReviewed) and not reviewed.approved
        assert reviewed.failure_type == defect, reviewed.reasons
        assert isinstance(feedback, EnvFeedback) and feedback.failure_type == defect and feedback.attempt == 1

        revised = builder.handle(wrap(feedback))
        assert len(revised) == 1
        second = revised[0]
        assert isinstance(second, EnvBuilt)
        assert second.builder == "llm" and second.revision == 1 and second.parent_task_id == first.task_id
        assert "Reviewer feedback on the previous revision" in llm_scripts.requests_text(bsrv.requests)
        assert defect in llm_scripts.requests_text(bsrv.requests[-1:])  # the feedback reached the model

        final = reviewer.handle(wrap(second))
        assert len(final) == 1 and isinstance(final[0], EnvReviewed)
        assert final[0].approved, final[0].reasons
        report = get_json(ctx.store, keys.task_review(second.task_id))
        assert {g["gate"] for g in report["gates"]} >= {"conformance", "validity", "leakage", "too_lax_probes",
                                                        "too_strict_probes", "llm_review"}
        with ctx.task_checkout(second.package_key) as task:
            meta = task.config().metadata
            assert meta.feedback_round == 1  # type: ignore[attr-defined]
            assert meta.protected_inputs[0].path == "data.csv"


def test_budget_exhausted_drops_the_task_with_its_record(tmp_path: Path) -> None:
    with ScriptedLLMServer(llm_scripts.builder_model("too_lax")) as bsrv:
        ctx = make_context(tmp_path)
        builder = BuilderService(ctx, BuilderSettings(builder_llm_base_url=bsrv.base_url))
        reviewer = ReviewerService(ctx, ReviewerSettings(feedback_budget=0))
        built = builder.handle(wrap(put_skill(ctx.store, FIXTURES / "ledger-basics")))[0]
        outputs = reviewer.handle(wrap(built))
        assert len(outputs) == 1 and not outputs[0].approved  # type: ignore[union-attr]
        dropped = get_json(ctx.store, f"tasks/{built.task_id}/dropped.json")  # type: ignore[union-attr]
        assert dropped["failure_type"] == "too_lax"
        assert get_json(ctx.store, dropped["report_key"])["dropped"] is True


def _builder_for(
    tmp_path: Path, base_url: str, skill: str = "config-layers", **settings: Any
) -> tuple[ServiceContext, BuilderService, SkillIngested]:
    """A builder whose agent retries fast, and a skill (by default one the layered-config family fits)."""
    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(builder_llm_base_url=base_url, **settings))
    assert builder.author is not None
    builder.author.client.settings.backoff_s = 0.01
    event = put_skill(ctx.store, FIXTURES / skill, subcategory="version-control")
    return ctx, builder, event


def _closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def _run_summary(ctx: ServiceContext, event: SkillIngested, built: Iterable[Payload], tmp_path: Path) -> dict[str, Any]:
    summary = summarize([wrap(event), *(wrap(b) for b in built)], skills_seen=1, skills_accepted=1,
                        build_reports=read_build_reports(ctx.store))
    write_pipeline_funnel(tmp_path / "funnel.json", {}, summary)
    return summary


def test_unreachable_endpoint_falls_back_to_the_family_instance(tmp_path: Path) -> None:
    with ScriptedLLMServer(llm_scripts.builder_model(None), fail_first=100) as bsrv:
        ctx, builder, event = _builder_for(tmp_path, bsrv.base_url)
        built = builder.handle(wrap(event))[0]
        assert isinstance(built, EnvBuilt) and built.builder == "family" and built.template == "layered-config"
        with ctx.task_checkout(built.package_key) as task:
            assert "failed after" in task.config().metadata.llm_fallback_reason  # type: ignore[attr-defined]


def test_a_fallback_is_in_the_metadata_and_the_run_summary(tmp_path: Path) -> None:
    ctx, builder, event = _builder_for(tmp_path, _closed_port_url())
    built = builder.handle(wrap(event))
    assert len(built) == 1 and isinstance(built[0], EnvBuilt) and built[0].builder == "family"
    with ctx.task_checkout(built[0].package_key) as task:
        extra = task.config().metadata.model_extra or {}
        assert extra["builder"] == "family" and extra["llm_fallback_error"] == "llm_unavailable"
        assert "failed after" in extra["llm_fallback_reason"]
    record = get_json(ctx.store, fallback_record_key(event.skill_id, built[0].task_id))
    assert record["builder"] == "family" and record["error"] == "llm_unavailable"

    summary = _run_summary(ctx, event, built, tmp_path)
    assert summary["tasks_by_builder"] == {"family": 1}
    assert [(f["task_id"], f["builder"], f["error"]) for f in summary["llm_fallbacks"]] == [
        (built[0].task_id, "family", "llm_unavailable")]
    assert "failed after" in summary["llm_fallbacks"][0]["reason"]
    assert summary["llm_fallbacks_by_error"] == {"llm_unavailable": 1}
    funnel = json.loads((tmp_path / "funnel.json").read_text())["build"]
    assert funnel["tasks_by_builder"] == {"family": 1} and len(funnel["llm_fallbacks"]) == 1


def test_require_llm_turns_the_fallback_into_a_typed_build_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLGYM_REQUIRE_LLM", "true")
    ctx, builder, event = _builder_for(tmp_path, _closed_port_url())
    assert builder.settings.require_llm
    assert builder.handle(wrap(event)) == []
    report = get_json(ctx.store, skill_build_report_key(event.skill_id))
    assert report["outcome"] == "skipped" and report["skip_reason"] == "llm_required"
    assert report["error"] == "LLMRequiredError" and report["reason"] == "llm_required"
    assert report["fallback"] == "family" and report["llm_error"]["reason"] == "llm_unavailable"
    assert "failed after" in report["llm_error"]["message"]
    assert not [key for key in ctx.store.list("skills/") if "/fallbacks/" in key]

    summary = _run_summary(ctx, event, [], tmp_path)
    assert summary["skills_skipped_by_reason"] == {"llm_required": 1}
    assert summary["tasks_by_builder"] == {} and summary["llm_fallbacks"] == []


def test_a_text_template_fallback_is_recorded_or_refused(tmp_path: Path) -> None:
    plan: dict[str, Any] = {"skill": "csv-cleanup", "preferred_templates": ["section-trace"]}
    ctx, builder, event = _builder_for(tmp_path / "default", _closed_port_url(), **plan)
    built = builder.handle(wrap(event))
    assert len(built) == 1 and isinstance(built[0], EnvBuilt) and built[0].builder == "template"
    assert get_json(ctx.store, fallback_record_key(event.skill_id, built[0].task_id))["builder"] == "template"

    ctx, builder, event = _builder_for(tmp_path / "required", _closed_port_url(), require_llm=True, **plan)
    assert builder.handle(wrap(event)) == []
    report = get_json(ctx.store, skill_build_report_key(event.skill_id))
    assert report["skip_reason"] == "llm_required" and report["fallback"] == "template"


def test_require_llm_without_a_builder_endpoint_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LLMRequiredError) as info:
        BuilderService(make_context(tmp_path), BuilderSettings(require_llm=True))
    assert info.value.reason == "llm_required"


def test_the_builder_agent_starts_from_the_family_seed_with_the_configured_model(tmp_path: Path) -> None:
    turns = [assistant("", [tool_call("list_files", {})]),
             assistant("", [tool_call("read_file", {"path": "seed/tests/verify.py"})]),
             assistant("", [tool_call("validate", {})]),
             assistant("", [tool_call("finish", {"summary": "kept the family's task"})])]
    with ScriptedLLMServer(Sequence(turns)) as bsrv:
        ctx = make_context(tmp_path)
        settings = BuilderSettings(builder_llm_base_url=bsrv.base_url, builder_llm_model="builder-model-7")
        event = put_skill(ctx.store, FIXTURES / "config-layers", subcategory="version-control")
        built = BuilderService(ctx, settings).handle(wrap(event))[0]
        assert isinstance(built, EnvBuilt) and built.builder == "llm" and built.template == "layered-config"
        assert {request["model"] for request in bsrv.requests} == {"builder-model-7"}
        conversation = llm_scripts.requests_text(bsrv.requests)
        assert "Task family `layered-config`" in conversation and "seed/tests/verify.py" in conversation
        assert "validation passed" in conversation
        with ctx.task_checkout(built.package_key) as task:
            meta = task.config().metadata
            extra = meta.model_extra or {}
            assert extra["llm_validation"]["passed"] and extra["family"] == "layered-config"
            assert (task.tests / "verify.py").read_text() == family_text("layered-config", "verify.py")
            assert task.config().agent.timeout_sec == family_registry().get("layered-config").spec.limits.agent_timeout_sec


def test_a_failed_validation_is_repaired_before_the_draft_is_submitted(tmp_path: Path) -> None:
    bad = llm_scripts.good_files()
    llm_scripts.DEFECTS["too_lax"](bad)
    turns = llm_scripts.writing_turns(bad) + llm_scripts.writing_turns(llm_scripts.good_files())
    with ScriptedLLMServer(Sequence(turns)) as bsrv:
        ctx = make_context(tmp_path)
        builder = BuilderService(ctx, BuilderSettings(builder_llm_base_url=bsrv.base_url))
        built = builder.handle(wrap(put_skill(ctx.store, FIXTURES / "ledger-basics")))[0]
        assert isinstance(built, EnvBuilt) and built.builder == "llm"
        assert "validation failed" in llm_scripts.requests_text(bsrv.requests)
        with ctx.task_checkout(built.package_key) as task:
            extra = task.config().metadata.model_extra or {}
            assert extra["llm_validation"]["passed"]
            assert extra["family_seed_skill"].endswith("-example")  # no family fits: the nearest family's example


def test_agent_skip_is_the_suitability_gate(tmp_path: Path) -> None:
    with ScriptedLLMServer(llm_scripts.skipping_builder_model()) as bsrv:
        ctx = make_context(tmp_path)
        builder = BuilderService(ctx, BuilderSettings(builder_llm_base_url=bsrv.base_url))
        event = put_skill(ctx.store, FIXTURES / "ledger-basics")
        assert builder.handle(wrap(event)) == []
        report = get_json(ctx.store, skill_build_report_key(event.skill_id))
        assert report["skip_reason"] == "llm_declined" and "no checkable procedure" in report["message"]
