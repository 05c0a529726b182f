"""skill-script on a script whose JSON input format the skill documents: the example in its text
that shares the keys the script reads is what each instance's input is varied from (numbers and
list lengths drawn again, keys and categories kept, documentation comments read past), so the
script computes on the structure it expects instead of generic records it ignores."""

from __future__ import annotations

import json
import random
from pathlib import Path

from skillgym_builder.families.script_cli import analyse
from skillgym_builder.families.script_exemplars import document_exemplar, varied
from skillgym_builder.families.skill_script import SkillScriptFamily, material
from skillgym_core.envbuild import LocalVenvProvider

from tests.builder.family_support import build, card_for, write_skill

KNOBS = {"record_count": 20, "noise_level": 0.1, "distractor_files": 0, "long_horizon": 2}
PLAN_MD = '''\
---
name: unit-economics
description: Scores a business plan's unit economics.
---
Score a plan with `python3 scripts/score.py plan.json`.

**Input format:**
```json
{
  "company": "Example Co",
  "market": {"tam": 5000000, "growth_rate": 12.5, "maturity": "growing"}, // yearly figures
  "unit": {"cac": 400, "ltv": 1800},
  "channels": [{"name": "ads", "spend": 1200.0}, {"name": "events", "spend": 300.0}]
}
```

A configuration example that is not the input:
```json
{"verbose": true}
```
'''
PLAN_PY = '''\
    """Unit economics of a plan: LTV:CAC, the market's five-year size and channel spend."""
    import json, sys
    with open(sys.argv[1]) as handle:
        data = json.load(handle)
    unit, market = data["unit"], data["market"]
    years = [round(market["tam"] * (1 + market["growth_rate"] / 100) ** y) for y in range(5)]
    spend = sum(channel["spend"] for channel in data.get("channels", []))
    print(json.dumps({"ltv_cac": round(unit["ltv"] / unit["cac"], 2), "tam_by_year": years,
                      "channel_spend": spend, "maturity": market["maturity"]}, indent=2))
'''


def test_the_example_sharing_the_scripts_keys_is_found_past_its_comments(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", PLAN_MD, {"scripts/score.py": PLAN_PY})
    example = json.loads(document_exemplar(folder, (folder / "SKILL.md").read_text(), "json", {"unit", "market"}, None))
    assert set(example) == {"company", "market", "unit", "channels"}
    assert document_exemplar(folder, (folder / "SKILL.md").read_text(), "json", {"elsewhere"}, None) == ""


def test_a_varied_example_keeps_its_structure_and_categories_and_draws_numbers_again() -> None:
    example = {"n": 10, "rate": 2.5, "label": "growing", "flag": True, "rows": [{"v": 1}, {"v": 2}]}
    first, again, other = (varied(example, random.Random(seed), 0.1) for seed in (1, 1, 2))
    assert first == again and first != other
    assert first["label"] == "growing" and first["flag"] is True and isinstance(first["n"], int)
    assert isinstance(first["rate"], float) and all(set(row) == {"v"} for row in first["rows"])


def test_inputs_follow_the_skills_example(tmp_path: Path) -> None:
    call = analyse(card_for("unit-economics", None, folder=write_skill(tmp_path / "s", PLAN_MD, {"scripts/score.py": PLAN_PY})))
    assert call.input_kind == "json" and call.exemplars
    document = json.loads(material(call, "data/plan.json", random.Random(3), 20, 0.1)["data/plan.json"])
    assert set(document) == {"company", "market", "unit", "channels"}
    assert document["market"]["maturity"] == "growing" and all(set(c) == {"name", "spend"} for c in document["channels"])


def test_a_documented_input_format_gets_a_task_whose_reference_passes(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    card = card_for("unit-economics", None, folder=write_skill(tmp_path / "s", PLAN_MD, {"scripts/score.py": PLAN_PY}))
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=1)
    expected = json.loads((built.task.root / "tests" / "expected.json").read_text())
    assert all(set(result["value"]) == {"ltv_cac", "tam_by_year", "channel_spend", "maturity"} for result in expected["results"])
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed


def test_named_things_of_one_kind_are_cut_to_a_subset_and_an_example_with_nothing_to_vary_is_passed_over(
        tmp_path: Path) -> None:
    dependencies = {"name": "app", "dependencies": {"moment": "^2.24.0", "request": "^2.88.0", "lodash": "^4.17.0",
                                                    "express": "^4.18.0"}}
    subsets = {tuple(varied(dependencies, random.Random(seed), 0.0)["dependencies"]) for seed in range(8)}
    assert len(subsets) > 1 and all(subset for subset in subsets)
    assert varied(dependencies, random.Random(1), 0.0)["name"] == "app"
    fixed = "---\nname: s\ndescription: d\n---\n```json\n{\"mode\": \"strict\", \"name\": \"x\"}\n```\n"
    folder = write_skill(tmp_path / "s", fixed, {})
    assert document_exemplar(folder, fixed, "json", {"mode"}, None) == ""


def test_a_yaml_example_with_dates_is_passed_over_not_a_crash(tmp_path: Path) -> None:
    dated = "---\nname: s\ndescription: d\n---\n```yaml\nrelease: 2024-05-01\nbudget: 300\nitems: [1, 2]\n```\n"
    folder = write_skill(tmp_path / "s", dated, {})
    assert document_exemplar(folder, dated, "yaml", {"budget"}, None) == ""
    plain = dated.replace("release: 2024-05-01\n", "")
    assert json.loads(document_exemplar(folder, plain, "yaml", {"budget"}, None)) == {"budget": 300, "items": [1, 2]}
