"""The family framework: specs, the suitability gate, knobs and hardening order, the skill-fact
readers (builder side and reference-solution side agree), requirements, the CLI and the summary."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import registry, skillfacts
from skillgym_builder.families.base import KNOB_NAMES, RenderedFamily
from skillgym_builder.families.common import requirements
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.seeds import seed_card
from skillgym_builder.patterns import PatternPool
from skillgym_core.contracts.events import EnvBuilt, Envelope, EnvReviewed, EnvValidated, Payload, SkillIngested
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore

from skillgym.cli import main
from skillgym.summary import read_build_reports, summarize
from tests.builder.family_support import card_for, solution_helper

KNOWN_EQUIVALENCES = {"reformat_json", "trailing_whitespace", "whitespace", "reorder_lists", "reorder_lines",
                      "reorder_rows", "reorder_columns", "case", "number_format"}
FIXTURE_OF = {"tabular-profile": ("eda-report", "data-analysis"), "spreadsheet-extract": ("expense-workbooks", "spreadsheets"),
              "service-triage": ("web-service-triage", "system-administration"), "test-repair": ("tdd-workflow", "testing-qa"),
              "layered-config": ("config-layers", "version-control")}


TAXONOMY = Path(__file__).resolve().parents[2] / "services/ingest/skillgym_ingest/taxonomy/taxonomy.json"


def test_the_families_cover_every_category_but_blockchain_and_thirty_subcategories() -> None:
    families = registry().all()
    taxonomy = {c["id"]: {s["id"] for s in c["subcategories"]} for c in json.loads(TAXONOMY.read_text())["categories"]}
    assert {f.spec.category for f in families} == set(taxonomy) - {"blockchain"}
    served = {sub for f in families for sub in f.spec.subcategories}
    assert len(served) >= 30
    assert served <= {sub for subs in taxonomy.values() for sub in subs}


def test_the_families_have_real_knobs() -> None:
    families = registry().all()
    pool = PatternPool.builtin().patterns
    for family in families:
        spec = family.spec
        assert spec.knobs and spec.rubric, spec.id
        assert spec.subcategories or spec.id == "skill-script", spec.id  # it serves any skill with a CSV script
        assert {k.name for k in spec.knobs} <= set(KNOB_NAMES)
        assert all(len(k.levels) >= 2 and k.levels == sorted(k.levels) for k in spec.knobs), spec.id
        assert all(k.pattern in pool for k in spec.knobs), spec.id
        assert all(set(names) <= KNOWN_EQUIVALENCES for names in spec.equivalences.values()), spec.id


ALL_FAMILIES = registry().ids()


@pytest.mark.parametrize("family_id", ALL_FAMILIES)
def test_every_family_instantiates_a_complete_task(family_id: str) -> None:
    family = registry().get(family_id)
    card = seed_card(family.spec)
    assert family.suitability(card).fits
    output = family.instantiate(card, 0, {})
    assert output.instruction.startswith("# ") and "/tests" not in output.instruction and "/solution" not in output.instruction
    finished_after_render = isinstance(family, RenderedFamily)  # its verifier needs the script's results
    if finished_after_render:
        assert output.render_jobs and not output.tests
    else:
        assert {"test.sh", "checks.py", "verify.py", "expected.json", "rubric.json"} <= set(output.tests)
        assert {item["name"] for item in json.loads(output.tests["rubric.json"])} <= {i.name for i in family.spec.rubric}
    assert output.solve_script and "/skills/" in output.solve_script
    assert output.alternative_scripts, "at least one valid alternative solution"
    assert set(output.protected) <= set(output.workspace) | {p for job in output.render_jobs for p in job.produces}
    assert "skill_claim" in output.metadata
    again = family.instantiate(card, 0, {})
    assert again.workspace == output.workspace and again.tests == output.tests
    other = family.instantiate(card, 1, {})
    assert (other.workspace if finished_after_render else other.tests) != (output.workspace if finished_after_render else output.tests)


@pytest.mark.parametrize("family_id", sorted(FIXTURE_OF))
def test_every_family_fits_its_fixture_skill(family_id: str) -> None:
    name, sub = FIXTURE_OF[family_id]
    assert registry().get(family_id).suitability(card_for(name, sub)).fits


def test_the_gate_says_why_a_family_does_not_fit() -> None:
    spec = registry().get("tabular-profile").spec
    card = card_for("eda-report", "data-analysis")
    assert assess(spec, SkillEvidence.of(card)).code == "subcategory"
    for runtime, code in [({"network": {"required": True}}, "needs_network"), ({"gpu": {"required": True}}, "needs_gpu")]:
        verdict = assess(spec, SkillEvidence.of(card_for("eda-report", "data-analysis", runtime=runtime)))
        assert (verdict.fits, verdict.code) == (False, code)
    by_package = card_for("tdd-workflow", "task-planning", runtime={"dependencies": {"declared": ["pandas"]}})
    assert assess(spec, SkillEvidence.of(by_package)).code == "dependencies"
    missing = spec.model_copy(update={"dependencies": spec.dependencies.model_copy(update={"binaries": ["no-such-tool"]})})
    assert assess(missing, SkillEvidence.of(card)).code == "missing_binaries"
    unrelated = assess(spec, SkillEvidence.of(card_for("tdd-workflow", "task-planning", category="productivity")))
    assert not unrelated.fits and "task-planning" in unrelated.reason


def test_a_skill_nothing_fits_gets_one_skip_reason() -> None:
    choice = registry().choose(card_for("eda-report", "data-analysis", runtime={"network": {"required": True}}))
    assert choice.family is None and choice.skip_reason == "needs_network"
    choice = registry().choose(card_for("csv-cleanup", "editing-proofreading", category="writing"))
    assert choice.family is None and choice.skip_reason == "subcategory_not_served"


def test_knob_presets_hardening_and_labels() -> None:
    spec = registry().get("tabular-profile").spec
    easy = knob_rules.preset(spec, "easy", random.Random(0))
    assert easy == knob_rules.defaults(spec) and knob_rules.difficulty_label(spec, easy) == "easy"
    assert knob_rules.patterns(spec, easy) == []
    hard = knob_rules.preset(spec, "hard", random.Random(0))
    assert knob_rules.difficulty_label(spec, hard) == "hard" and len(knob_rules.patterns(spec, hard)) == 2
    raised, changes = knob_rules.harden(spec, easy)
    assert [c.name for c in changes] == ["record_count"] and raised["record_count"] == 400
    with pytest.raises(knob_rules.UnknownKnobError):
        knob_rules.validate(spec, {"colour": 1})


@pytest.mark.parametrize(("fixture", "reader"), [
    ("eda-report", "report_sections"), ("web-service-triage", "vocabulary"), ("config-layers", "layer_order"),
    ("config-layers", "null_deletes"), ("tdd-workflow", "vocabulary"), ("csv-cleanup", "report_sections"),
])
def test_solution_side_skill_readers_agree_with_the_builder(fixture: str, reader: str) -> None:
    card = card_for(fixture, None)
    namespace = solution_helper("common", "skillfacts.py", card.root / "SKILL.md")  # as reference solutions import it
    fact = getattr(skillfacts, reader)(card)
    expected = (fact.value if fact else None) if reader != "null_deletes" else fact is not None
    assert namespace[reader]() == expected


def test_requirements_take_the_skills_accepted_packages_and_report_the_rest() -> None:
    spec = registry().get("tabular-profile").spec
    card = card_for("eda-report", "data-analysis", runtime={"dependencies": {"declared": ["scipy", "biopython", "https"]}})
    lines, skipped = requirements(spec, card)
    assert lines == ["pandas>=2.0", "scipy"]
    assert set(skipped) == {"biopython", "https"}


def test_families_command_lists_ids_categories_knobs_and_dependencies(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["families", "--json"]) == 0
    families = {f["id"]: f for f in json.loads(capsys.readouterr().out)}
    assert set(families) == set(registry().ids())
    assert families["spreadsheet-extract"]["dependencies"]["build_python"] == ["openpyxl>=3.1"]
    assert families["service-triage"]["category"] == "devops"
    assert {k["name"] for k in families["tabular-profile"]["knobs"]} == set(KNOB_NAMES)
    assert main(["families"]) == 0
    shown = capsys.readouterr()
    assert "Task families" in shown.out + shown.err and "tabular-profile" in shown.out + shown.err


def test_run_hands_the_builder_model_to_the_builder(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillgym_builder.settings import BuilderSettings

    from skillgym.cli import build_parser
    from skillgym.embedded import EmbeddedOptions
    from skillgym.wiring import environment

    monkeypatch.delenv("SKILLGYM_BUILDER_LLM_MODEL", raising=False)
    args = build_parser().parse_args(["run", "skill-dir", "--out", "x", "--builder-llm-model", "qwen-coder"])
    assert args.builder_llm_model == "qwen-coder"
    with environment(EmbeddedOptions(builder_llm_model=args.builder_llm_model).env()):
        assert BuilderSettings().builder_llm_model == "qwen-coder"
    with environment(EmbeddedOptions().env()):
        assert BuilderSettings().builder_llm_model == "default"


def _wrap(payload: Payload) -> Envelope:
    return Envelope.wrap(payload, producer="test", correlation_id="c")


def test_summary_counts_tasks_per_family_and_skipped_skills_per_reason(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    put_json(store, "skills/s1/build.json", {"skill_id": "s1", "outcome": "built", "family": "layered-config"})
    put_json(store, "skills/s2/build.json", {"skill_id": "s2", "outcome": "skipped", "skip_reason": "needs_network"})
    put_json(store, "skills/s3/build.json", {"skill_id": "s3", "outcome": "skipped", "skip_reason": "needs_network"})
    events = [
        _wrap(SkillIngested(skill_id=s, name=s, record_key="r", files_key="f")) for s in ("s1", "s2", "s3")
    ] + [
        _wrap(EnvBuilt(task_id="t1", skill_id="s1", package_key="p", template="layered-config", builder="family")),
        _wrap(EnvBuilt(task_id="t2", skill_id="s1", package_key="p", template="layered-config", builder="family")),
        _wrap(EnvReviewed(task_id="t1", skill_id="s1", package_key="p", approved=True)),
        _wrap(EnvValidated(task_id="t1", skill_id="s1", package_key="p", valid=True)),
    ]
    summary = summarize(events, skills_seen=3, skills_accepted=3, build_reports=read_build_reports(store))
    assert summary["tasks_by_family"] == {"layered-config": {"built": 2, "approved": 1, "validated": 1}}
    assert summary["skills_without_task"] == 2
    assert summary["skills_skipped_by_reason"] == {"needs_network": 2}


@pytest.mark.parametrize("family_id", ALL_FAMILIES)
def test_instance_rubrics_are_valid_contracts(family_id: str, tmp_path: Path) -> None:
    from skillgym_builder.errors import UnsuitableSkillError
    from skillgym_builder.families.render import SandboxRenderer
    from skillgym_core.llm.judge import parse_rubric
    from skillgym_core.sandbox.local import LocalSandbox

    family = registry().get(family_id)
    for card in (seed_card(family.spec), card_for("csv-cleanup", None)):  # with and without the skill's facts
        try:
            output = family.instantiate(card, 0, {})
        except UnsuitableSkillError:
            assert card.record.skill_id != f"seed-{family_id}", "a family must build for its own example skill"
            continue
        if isinstance(family, RenderedFamily):
            renderer = SandboxRenderer(LocalSandbox(), None, tmp_path)
            rendered = {rel: data for job in output.render_jobs for rel, data in renderer.render(job).items()}
            output = family.after_render(card, output, rendered)
        parse_rubric(json.loads(output.tests["rubric.json"]))


def test_families_command_shows_a_familys_example_task(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["families", "--example", "tabular-profile", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["instruction"].startswith("# ") and shown["rubric"] and shown["inputs"]
    assert main(["families", "--example", "layered-config", "--difficulty", "hard"]) == 0
    assert "checker (weight, rubric item):" in capsys.readouterr().out


GRAPH_SKILL = """---
name: graph-metrics
description: network analysis with networkx
---

# Graph metrics

```python
import networkx as nx
import numpy as np

graph = nx.read_edgelist("edges.txt")
print(nx.betweenness_centrality(graph))
```

From the results, report the most central nodes in a table.
"""


def test_a_family_built_on_other_libraries_does_not_take_a_library_skill(tmp_path: Path) -> None:
    """A networkx skill classified as data analysis would get a pandas profiling task that never
    touches networkx: refused with the reason, also when it loads its tables with pandas (a library
    nearly every data skill touches is not what this one teaches); a skill naming only such
    libraries, or none, is not affected."""
    spec = registry().get("tabular-profile").spec
    folder = tmp_path / "graph-metrics"
    folder.mkdir()
    (folder / "SKILL.md").write_text(GRAPH_SKILL)
    verdict = assess(spec, SkillEvidence.of(card_for("graph-metrics", "data-analysis", folder=folder)))
    assert (verdict.fits, verdict.code) == (False, "skill_library_elsewhere")
    assert "networkx" in verdict.reason and "library:networkx" in verdict.evidence and "numpy" not in verdict.evidence
    assert registry().choose(card_for("graph-metrics", "data-analysis", folder=folder)).family is None
    (folder / "SKILL.md").write_text(GRAPH_SKILL.replace("import numpy as np", "import pandas as pd"))
    assert assess(spec, SkillEvidence.of(card_for("graph-metrics", "data-analysis", folder=folder))).code == "skill_library_elsewhere"
    (folder / "SKILL.md").write_text(GRAPH_SKILL.replace("import networkx as nx", "import pandas as pd"))
    assert assess(spec, SkillEvidence.of(card_for("graph-metrics", "data-analysis", folder=folder))).fits
    (folder / "SKILL.md").write_text(GRAPH_SKILL.replace("from networkx", "").replace("import networkx as nx\n", ""))
    assert assess(spec, SkillEvidence.of(card_for("graph-metrics", "data-analysis", folder=folder))).code == "subcategory"
    prose = ("---\nname: p\ndescription: d\n---\n\nfrom the raw exports we import nothing; compare the\n"
             "import the spreadsheets first, then\nimport them again.\n")
    (folder / "SKILL.md").write_text(prose)  # prose lines starting with "from"/"import" are not imports
    assert assess(spec, SkillEvidence.of(card_for("graph-metrics", "data-analysis", folder=folder))).code == "subcategory"
    from skillgym_builder.families.libraries import imported_modules

    assert imported_modules(prose) == set()
    assert imported_modules("import polars as pl\nimport dask.dataframe\nimport os, sys\nimport duckdb\n") == {
        "polars", "dask", "os", "duckdb"}


def test_a_skills_code_languages_come_from_its_fences_and_files() -> None:
    from skillgym_builder.families.languages import code_languages

    text = "```bash\nmvn test\n```\n\n```Java\nclass A {}\n```\n\n~~~ {.ts}\nlet a = 1\n~~~\n\n```json\n{}\n```\n"
    assert code_languages(text) == {"java", "typescript"}  # shell and data formats are not languages
    assert code_languages("```\nplain\n```\n", ["scripts/run.py", "README.md", "lib/x.test.js"]) == {
        "python", "javascript"}
    assert code_languages("no code at all") == frozenset()
