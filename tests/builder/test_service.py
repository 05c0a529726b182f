"""The builder service: the suitability gate picks a family (or records why none fits), the
family's task is built and stored with its plan; the text templates run only when named."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from skillgym_builder import BuilderService
from skillgym_builder.families import registry as family_registry
from skillgym_builder.service import skill_build_report_key
from skillgym_builder.settings import BuilderSettings
from skillgym_core.conformance import check_task
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import EnvBuilt
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.store.base import get_json
from skillgym_core.taskrun import TaskRunner

from tests.builder.family_support import card_for
from tests.builder.skills import FIXTURES, make_context, put_skill, wrap
from tests.support.trees import deep_tree

TINY = "---\nname: tiny\ndescription: write friendlier release notes\n---\n\n# Tone\n\nBe kind and brief.\n"


def test_skill_becomes_a_family_task_with_its_plan_recorded(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "config-layers", subcategory="version-control")
    outputs = BuilderService(ctx).handle(wrap(event))
    assert len(outputs) == 1 and isinstance(outputs[0], EnvBuilt)
    built = outputs[0]
    assert (built.builder, built.template, built.revision) == ("family", "layered-config", 0)
    with ctx.task_checkout(built.package_key) as task:
        assert check_task(task.root) == []
        meta = task.config().metadata
        extra = meta.model_extra or {}
        assert meta.template == "layered-config" and extra["family"] == "layered-config"
        assert extra["suitability"]["code"] == "terms" and set(extra["knobs"]) == {
            "record_count", "distractor_files", "multi_step", "error_recovery", "long_horizon"}
        assert extra["skill_dependence"]["holds"] is True
        runner = TaskRunner(ctx.sandbox)
        assert not runner.verify(task, runner.fresh_workspace(task, tmp_path)).passed
        solved = runner.fresh_workspace(task, tmp_path)
        assert runner.run_solution(task, solved).ok
        assert runner.verify(task, solved).passed
    report = get_json(ctx.store, skill_build_report_key(event.skill_id))
    assert report["outcome"] == "built" and report["family"] == "layered-config"
    assert set(report["fits"]) == set(family_registry().ids())


def test_build_is_deterministic(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "config-layers", subcategory="version-control")
    first = BuilderService(ctx).handle(wrap(event))[0]
    second = BuilderService(ctx).handle(wrap(event))[0]
    assert first == second
    assert ctx.store.get_bytes(first.package_key)


def test_several_instances_per_skill_are_distinct_tasks_of_the_chosen_family(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "config-layers", subcategory="version-control")
    settings = BuilderSettings(instances_per_skill=3, check_skill_dependence=False)
    outputs = BuilderService(ctx, settings).handle(wrap(event))
    assert len(outputs) == 3 and all(isinstance(o, EnvBuilt) and o.template == "layered-config" for o in outputs)
    assert len({o.task_id for o in outputs}) == 3
    seeds, workspaces = set(), set()
    for built in outputs:
        assert isinstance(built, EnvBuilt)
        with ctx.task_checkout(built.package_key) as task:
            assert check_task(task.root) == []
            seeds.add((task.config().metadata.model_extra or {})["family_seed"])
            workspaces.add(tuple(sorted((p.relative_to(task.root).as_posix(), p.read_bytes())
                                        for p in (task.root / "environment" / "workspace").rglob("*") if p.is_file())))
    assert seeds == {0, 1, 2} and len(workspaces) == 3
    report = get_json(ctx.store, skill_build_report_key(event.skill_id))
    assert report["task_ids"] == [o.task_id for o in outputs if isinstance(o, EnvBuilt)]


def _skipped(tmp_path: Path, name: str, skill_md: str, *, category: str, subcategory: str) -> dict[str, Any]:
    """The build report of a one-file skill the builder is expected to skip."""
    skill = tmp_path / name
    skill.mkdir()
    (skill / "SKILL.md").write_text(skill_md)
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, skill, category=category, subcategory=subcategory)
    assert BuilderService(ctx).handle(wrap(event)) == []
    report: dict[str, Any] = get_json(ctx.store, skill_build_report_key(event.skill_id))
    return report


def test_a_skill_no_family_fits_is_skipped_with_every_familys_reason(tmp_path: Path) -> None:
    report = _skipped(tmp_path, "tiny", TINY, category="blockchain", subcategory="smart-contracts")
    assert report["outcome"] == "skipped" and report["reason"] == "unsuitable"
    assert report["skip_reason"] == "subcategory_not_served"
    assert set(report["fits"]) == set(family_registry().ids())
    assert report["fits"]["skill-script"]["code"] == "no_script"  # says nothing of the subcategory
    assert all(not fit["fits"] and "smart-contracts" in fit["reason"] for fid, fit in report["fits"].items()
               if fid != "skill-script")


def test_a_skill_that_needs_the_network_is_skipped_for_that_reason(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "web-service-triage", subcategory="system-administration",
                      runtime={"network": {"required": True, "signals": ["api_key"]}})
    assert BuilderService(ctx).handle(wrap(event)) == []
    assert get_json(ctx.store, skill_build_report_key(event.skill_id))["skip_reason"] == "needs_network"


LOOSE_FIT = """---
name: trainer-notes
description: notes on training neural networks from CSV datasets
---

# Training loops

Load the dataset from a CSV file, pick the feature columns and the label column, and drop rows
that cannot be parsed. Aggregate the epoch metrics into one table; watch for outliers in the loss.
Use mixed precision on a GPU when one is present and save a checkpoint every epoch.
"""


def test_a_family_whose_task_would_not_use_the_skill_skips_it(tmp_path: Path) -> None:
    """The words fit a family, but its task would use none of the skill's scripts, libraries,
    tools or stated facts: no task is built, and the funnel says why."""
    report = _skipped(tmp_path, "trainer-notes", LOOSE_FIT, category="data-science", subcategory="deep-learning")
    assert report["outcome"] == "skipped" and report["skip_reason"] == "family_no_skill_use", report
    assert report["fits"]["tabular-profile"]["fits"] and "tabular-profile" in report["families_tried"]
    assert "without anything the skill teaches" in report["message"]


GEO_SKILL = """---
name: geo-frames
description: spatial joins and map layers with geopandas
---

# Geo frames

```python
import geopandas as gpd

parcels = gpd.read_file("parcels.gpkg")
```

Read the dataset, aggregate the rows per district and check the columns; write GeoParquet through
pyarrow when the dataset is large.
"""


def test_a_library_skill_gets_no_task_that_uses_none_of_its_libraries(tmp_path: Path) -> None:
    """A geopandas skill naming pyarrow shows the tabular family's own evidence, but that family's
    task would profile a CSV file in pandas without touching either: skipped, not built."""
    skill = tmp_path / "geo-frames"
    skill.mkdir()
    (skill / "SKILL.md").write_text(GEO_SKILL)
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, skill, category="data-science", subcategory="data-analysis",
                      runtime={"dependencies": {"declared": ["geopandas", "pyarrow"], "imported": ["geopandas"]}})
    assert BuilderService(ctx).handle(wrap(event)) == []
    report: dict[str, Any] = get_json(ctx.store, skill_build_report_key(event.skill_id))
    fit = report["fits"]["tabular-profile"]
    assert fit["fits"] and fit["code"] == "subcategory" and "package:pyarrow" in fit["evidence"]
    assert report["skip_reason"] == "family_no_skill_use" and "tabular-profile" in report["families_tried"]

LOG_TRIAGE = """---
name: log-error-triage
description: Triage application log files by grouping ERROR lines into signatures and counting them.
---

# Log error triage

1. Keep only lines whose level is `ERROR`; normalise numbers to `<n>`.
2. Group lines by component and signature, count each group and keep its first timestamp.
3. Check which nginx upstream failed and restart the service when the config is fixed.
"""


def test_a_family_of_the_skills_subcategory_is_no_template_when_its_task_uses_nothing_of_it(tmp_path: Path) -> None:
    """Filed under system administration and naming nginx, a log-triage procedure corroborates the
    service-triage family; but that task, fixing an nginx configuration, follows none of the
    procedure: skipped, never a task whose usage reads none."""
    report = _skipped(tmp_path, "log-error-triage", LOG_TRIAGE, category="devops", subcategory="system-administration")
    fit = report["fits"]["service-triage"]
    assert fit["fits"] and fit["code"] == "subcategory" and len(fit["evidence"]) > 1, fit
    assert report["skip_reason"] == "family_no_skill_use" and "service-triage" in report["families_tried"]


PROMPT_FRAGMENT = """---
name: tool-call-punctuation
description: Tells the assistant not to end a sentence with a colon before a tool call
---

Do not put a colon before a tool call. The call may not be shown in the output, so a sentence
that announces it should end with a period instead.
"""


def test_a_bare_classification_does_not_make_a_family_the_skills_template(tmp_path: Path) -> None:
    """Filed under agent tooling, a prompt fragment shows none of the draft-fixing family's own
    evidence, and that family's task would use nothing it says: skipped, not a draft-fixing task."""
    report = _skipped(tmp_path, "tool-call-punctuation", PROMPT_FRAGMENT, category="ai-agents",
                      subcategory="agent-tooling")
    fit = report["fits"]["skill-package"]
    assert fit["fits"] and fit["code"] == "subcategory" and fit["evidence"] == ["subcategory:agent-tooling"]
    assert report["skip_reason"] == "family_no_skill_use" and "skill-package" in report["families_tried"]


def test_text_templates_run_only_when_the_plan_names_them(tmp_path: Path) -> None:
    ctx = make_context(tmp_path)
    event = put_skill(ctx.store, FIXTURES / "csv-cleanup")
    assert BuilderService(ctx).handle(wrap(event)) == []  # no family fits, and no text puzzle instead
    named = BuilderService(ctx, BuilderSettings(preferred_templates=["section-trace"])).handle(wrap(event))
    assert len(named) == 1 and named[0].builder == "template" and named[0].template == "section-trace"  # type: ignore[union-attr]
    with ctx.task_checkout(named[0].package_key) as task:  # type: ignore[union-attr]
        assert check_task(task.root) == []


def test_the_plan_can_name_the_family(tmp_path: Path) -> None:
    card = card_for("config-layers", "system-administration")
    families = family_registry()
    assert families.choose(card).family.spec.id == "service-triage"  # type: ignore[union-attr]
    chosen = families.choose(card, ["layered-config"])
    assert chosen.family.spec.id == "layered-config"  # type: ignore[union-attr]
    assert chosen.fits["service-triage"].strength == 2 and chosen.fits["layered-config"].strength == 1


def test_a_corpus_spreads_over_every_reasoning_profile(tmp_path: Path) -> None:
    from skillgym_builder.templates.registry import registry

    ctx = make_context(tmp_path)
    profiles = set()
    for index in range(12):
        fixture = tmp_path / "corpus" / f"csv-cleanup-{index}"
        shutil.copytree(FIXTURES / "csv-cleanup", fixture)
        (fixture / "SKILL.md").write_text((fixture / "SKILL.md").read_text() + f"\nVariant {index}.\n")
        event = put_skill(ctx.store, fixture)
        with BuilderService(ctx)._card(event.skill_id) as card:
            first = registry().candidates(card)[0]
        profiles.add(first.spec.profile)
    assert len(profiles) >= 2, profiles


def test_feedback_rebuilds_a_fresh_instance_until_the_revision_budget_is_spent(tmp_path: Path) -> None:
    from skillgym_core.contracts.events import EnvFeedback

    ctx = make_context(tmp_path)
    builder = BuilderService(ctx, BuilderSettings(max_revisions=2, check_skill_dependence=False))
    event = put_skill(ctx.store, FIXTURES / "config-layers", subcategory="version-control")
    current = builder.handle(wrap(event))[0]
    for revision in (1, 2):
        feedback = EnvFeedback(task_id=current.task_id, skill_id=event.skill_id, failure_type="too_strict",  # type: ignore[union-attr]
                               reasons=["a valid answer was rejected"], attempt=1)
        revised = builder.handle(wrap(feedback))
        assert len(revised) == 1 and revised[0].revision == revision  # type: ignore[union-attr]
        assert revised[0].task_id != current.task_id  # type: ignore[union-attr]
        with ctx.task_checkout(revised[0].package_key) as task:  # type: ignore[union-attr]
            extra = task.config().metadata.model_extra or {}
            assert extra["family_seed"] == revision and extra["feedback"]["failure_type"] == "too_strict"
        current = revised[0]
    last = EnvFeedback(task_id=current.task_id, skill_id=event.skill_id, failure_type="too_strict",  # type: ignore[union-attr]
                       reasons=["again"], attempt=1)
    assert builder.handle(wrap(last)) == []
    assert get_json(ctx.store, f"tasks/{current.task_id}/feedback-dropped.json")["outcome"] == "revision_budget_spent"  # type: ignore[union-attr]


def test_a_skill_script_that_fails_when_run_hands_over_to_the_next_family(tmp_path: Path) -> None:
    skill = tmp_path / "config-layers"
    shutil.copytree(FIXTURES / "config-layers", skill)
    (skill / "scripts").mkdir(exist_ok=True)
    (skill / "scripts" / "tally.py").write_text(
        "import csv, json, sys\n"
        "rows = list(csv.DictReader(open(sys.argv[1])))\n"
        "raise SystemExit('needs the production database')\n"
        "print(json.dumps(sum(int(r['count']) for r in rows)))\n")
    ctx = make_context(tmp_path / "ctx")
    event = put_skill(ctx.store, skill, subcategory="version-control")
    choice = family_registry().choose(card_for("config-layers", "version-control", folder=skill))
    assert choice.family is not None and choice.family.spec.id == "skill-script"
    outputs = BuilderService(ctx).handle(wrap(event))
    assert len(outputs) == 1 and isinstance(outputs[0], EnvBuilt) and outputs[0].template == "layered-config"


def test_builds_run_side_by_side_make_the_tasks_they_make_one_at_a_time(tmp_path: Path) -> None:
    skills = [("config-layers", "version-control", None), ("web-service-triage", "system-administration", None),
              ("tdd-workflow", "testing-qa", "development")]

    def events(ctx: ServiceContext) -> list[Any]:
        return [wrap(put_skill(ctx.store, FIXTURES / name, subcategory=sub, category=category))
                for name, sub, category in skills]  # fmt: skip

    alone = make_context(tmp_path / "alone")
    builder = BuilderService(alone)
    assert builder.concurrent
    one_at_a_time = [builder.handle(event) for event in events(alone)]
    together = make_context(tmp_path / "together")
    side_by_side_builder = BuilderService(together)
    with ThreadPoolExecutor(max_workers=3) as pool:
        side_by_side = list(pool.map(side_by_side_builder.handle, events(together)))
    assert side_by_side == one_at_a_time and all(len(outputs) == 1 for outputs in one_at_a_time)
    for outputs in one_at_a_time:
        key = outputs[0].package_key  # type: ignore[attr-defined]
        assert together.store.get_bytes(key) == alone.store.get_bytes(key)


def test_a_build_folder_is_removed_whatever_the_authoring_agent_left_in_it(tmp_path: Path) -> None:
    builder = BuilderService(make_context(tmp_path), BuilderSettings())
    made = []
    try:
        for workdir in (builder._workdir, builder.flow._workdir):
            with workdir() as path:
                made.append(path)
                (path / "draft").mkdir()
                deep_tree(path / "draft")
        assert made and not any(path.exists() for path in made)
    finally:  # what is left is deeper than pytest's own removal of tmp_path can recurse
        for path in made:
            remove_tree(path)
