"""development/testing-qa: a generated package with planted bugs its own (protected) pytest
suite exposes; the agent fixes the code, the verifier runs the suite and fresh hidden cases."""

from __future__ import annotations

import difflib
import json
import random

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.katas import KATAS, Kata
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "test-repair"
PACKAGES = ("fieldkit", "opsutils", "ledgertools", "textkit", "datachores")
PROJECT = "project"
PYTEST_INI = "[pytest]\npythonpath = .\naddopts = -p no:cacheprovider\n"


def edits(path: str, before: str, after: str) -> list[dict[str, str]]:
    """Line-block replacements turning ``before`` into ``after``, each anchored on the line
    before it so it applies exactly once (what an agent's editor would do)."""
    old_lines, new_lines = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out = []
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in reversed(matcher.get_opcodes()):
        if tag == "equal":
            continue
        anchor = max(0, i1 - 1)
        out.append({"file": path, "old": "".join(old_lines[anchor:i2]),
                    "new": "".join(old_lines[anchor:i1]) + "".join(new_lines[j1:j2])})
    return out


class TestRepairFamily:
    __test__ = False  # not a pytest test class despite its name

    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        package = rng.choice(PACKAGES)
        katas = rng.sample(KATAS, min(len(KATAS), int(values["record_count"])))
        per_function = int(values["multi_step"])
        workspace: dict[str, bytes] = {f"{PROJECT}/pytest.ini": PYTEST_INI.encode()}
        fixes: list[dict[str, str]] = []
        rewrites: dict[str, str] = {}
        planted: dict[str, list[str]] = {}
        exports = [f"from .{k.module} import {k.function}\n" for k in katas]
        init = "".join(exports)
        if values["error_recovery"]:
            broken = rng.randrange(len(katas))
            exports[broken] = exports[broken].replace(katas[broken].function, _misspell(katas[broken].function))
            fixes += edits(f"{PROJECT}/{package}/__init__.py", "".join(exports), init)
            rewrites[f"{PROJECT}/{package}/__init__.py"] = init
        workspace[f"{PROJECT}/{package}/__init__.py"] = "".join(exports).encode()
        for kata in katas:
            bugs = rng.sample(kata.bugs, min(per_function, len(kata.bugs)))
            buggy = kata.source
            for bug in bugs:
                buggy = bug.plant(buggy)
            path = f"{PROJECT}/{package}/{kata.module}.py"
            workspace[path] = buggy.encode()
            workspace[f"{PROJECT}/tests/test_{kata.module}.py"] = kata.visible_tests.replace("{pkg}", package).encode()
            fixes += edits(path, buggy, kata.source)
            rewrites[path] = kata.alternative
            planted[kata.function] = [b.id for b in bugs]
        if values["distractor_files"]:
            workspace.update(_legacy(package, katas))
        protected = sorted(p for p in workspace if p.startswith(f"{PROJECT}/tests/") or p.endswith("pytest.ini"))
        items = rubric(self.spec, ["visible_suite", "hidden_cases"])
        reference = [{"module": k.module, "function": k.function, "source": k.source, "generator": k.generator}
                     for k in katas]
        hidden = {"package": package, "seed": rng.randrange(1, 10**6), "exports": sorted(k.function for k in katas)}
        tests = verifier_files(self.spec, hidden, items, {
            "probe.py": family_text(FAMILY_ID, "probe.py").encode(),
            "reference.json": (json.dumps(reference, indent=1) + "\n").encode(),
        })
        suite = f"(cd {PROJECT} && PYTHONDONTWRITEBYTECODE=1 python3 -m pytest -q tests)"
        solve = agent_solution(card, inspect=[f"ls -R {PROJECT}", f"{suite} || true"], script=source(FAMILY_ID, "fix.py"),
                               name="fix.py", run=f"python3 /tmp/work/fix.py {_quote(json.dumps(fixes))}\n{suite}")
        alternative = agent_solution(card, inspect=[f"{suite} || true"], script=source(FAMILY_ID, "rewrite.py"),
                                     name="rewrite.py",
                                     run=f"python3 /tmp/work/rewrite.py {_quote(json.dumps(rewrites))}\n{suite}")
        reqs, skipped = requirements(self.spec, card)
        claim = SkillClaim(claimed=False, reason="the repository and its tests carry everything the fix needs; "
                                                 "the skill teaches the workflow")
        return TemplateOutput(
            instruction=_instruction(package, bool(values["distractor_files"])),
            workspace=workspace,
            protected=protected,
            tests=tests,
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"rewrite-modules": alternative},
            blueprint=self.spec.blueprint,
            params={"package": package, "functions": len(katas), "bugs": planted},
            requirements=reqs,
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _misspell(name: str) -> str:
    return name[:-1] + name[-1] * 2


def _legacy(package: str, katas: list[Kata]) -> dict[str, bytes]:
    notes = (f"# {package}\n\n`legacy/` holds the pre-2023 copy of the package. It is not imported or tested any "
             "more and is kept only for reference.\n")
    files = {f"{PROJECT}/README.md": notes.encode()}
    for kata in katas:
        files[f"{PROJECT}/legacy/{kata.module}.py"] = kata.bugs[-1].plant(kata.source).encode()
    return files


def _instruction(package: str, legacy: bool) -> str:
    extra = " The `legacy/` folder is not part of the package." if legacy else ""
    return f"""# Make the `{package}` test suite pass

The `{package}` package in `/app/project` is failing its tests: run `python3 -m pytest` in `/app/project` to see
them.{extra}

Fix the package so the whole suite passes. The tests and `pytest.ini` describe the intended behaviour and must
not be changed; fix the code instead. Other services call these functions with inputs the tests do not cover,
so make each function behave as its docstring and tests specify in general, not just for the tested values.
"""
