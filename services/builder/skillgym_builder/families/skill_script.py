"""Any category: a skill that ships a Python script reading a CSV file gets a task whose shortest
path is that script. Inputs with the columns the script reads are generated per instance; the
builder runs the script on them in the sandbox (twice, and on a variant) and hides its result as
the expectation; the agent is told the goal and where results go, never the script or its options."""

from __future__ import annotations

import json
import random
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import script_data
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence
from skillgym_builder.families.render import RenderJob
from skillgym_builder.families.script_cli import ScriptCall, ScriptUnusable, analyse
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "skill-script"
TOLERANCE = 1e-9
UNUSABLE = "skill_script_unusable"
MAX_SKILL_FILE_BYTES = 256 * 1024
MAX_SKILL_BYTES = 4 * 1024 * 1024  # what the probe is handed of the skill, in all
PERIODS = ("2026_03", "2026_04", "2026_05", "2026_06")
ARCHIVE_NOTE = "Files under archive/ are superseded exports kept for audit; only the files in data/ itself are current.\n"


class SkillScriptFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        evidence = SkillEvidence.of(card)
        if evidence.network_required:
            return Fit(family=FAMILY_ID, fits=False, code="needs_network", reason="the skill needs network access; tasks run offline")
        if evidence.gpu_required:
            return Fit(family=FAMILY_ID, fits=False, code="needs_gpu", reason="the skill needs a GPU; tasks run on CPU")
        try:
            call = analyse(card)
        except ScriptUnusable as exc:
            return Fit(family=FAMILY_ID, fits=False, code=exc.code, reason=str(exc))
        # Running the skill's own tool is the most direct use a task can make of it: it outranks a subcategory fit.
        return Fit(family=FAMILY_ID, fits=True, code="skill_script", strength=3,
                   reason=f"the skill ships {call.script}, run on a CSV file as its {call.origin} shows",
                   evidence=[f"script:{call.script}", *(f"column:{c.name}:{c.kind}" for c in call.columns)])

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        try:
            call = analyse(card)
        except ScriptUnusable as exc:
            raise UnsuitableSkillError(str(exc), family=FAMILY_ID, skip_reason=exc.code) from exc
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        count, noise = int(values["record_count"]), float(values["noise_level"])
        inputs = []
        for period in rng.sample(PERIODS, k=int(values["long_horizon"])):
            stem = f"{call.example_stem}_{period}"
            inputs.append({"input": f"data/{stem}.csv", "output": f"out/{stem}{call.suffix}",
                           "text": script_data.dataset(call.columns, rng, count, noise)})
        variant = {**inputs[0], "text": script_data.dataset(call.columns, random.Random(f"{seed}:variant"), count, noise)}
        workspace = {item["input"]: item["text"].encode() for item in inputs}
        protected = sorted(workspace)
        for index in range(int(values["distractor_files"])):
            item = inputs[index % len(inputs)]
            stale = script_data.dataset(call.columns, rng, max(10, count // 4), noise)
            workspace[f"data/archive/{Path(item['input']).stem}_v{index + 1}.csv"] = stale.encode()
        if values["distractor_files"]:
            workspace["data/archive/README.txt"] = ARCHIVE_NOTE.encode()
        job = RenderJob(
            script=source(FAMILY_ID, "probe.py"),
            params={"files": _skill_files(card), "script": call.script, "argv": list(call.argv),
                    "writes_file": call.writes_file, "inputs": inputs, "variant": variant, "timeout": 60},
            requirements=call.packages,
            produces=("probe.json", *(f"expected/{i}.out" for i in range(len(inputs)))),
            timeout_s=60.0 * (2 * len(inputs) + 1) + 30,
        )
        claim = SkillClaim(claimed=True, reason=f"the expected results are what the skill's own {call.script} computes; "
                           "its options and conventions are stated only in the skill",
                           facts={"script": call.script, "argv": list(call.argv)})
        reqs, skipped = requirements(self.spec, card, call.packages)
        kind = "json" if call.output_kind == "json" else "text"
        return TemplateOutput(
            instruction=_instruction(card, inputs, kind, bool(values["distractor_files"])),
            workspace=workspace,
            protected=protected,
            tests={},
            solution_steps=[],
            solve_script=_solution(card, call, inputs),
            alternative_scripts={"reformatted": _solution(card, call, inputs, reformat=kind)},
            blueprint=self.spec.blueprint,
            params={"script": call.script, "origin": call.origin, "inputs": len(inputs), "records": count,
                    "columns": [c.name for c in call.columns]},
            requirements=reqs,
            equivalences={item["output"]: (["reformat_json"] if kind == "json" else ["trailing_whitespace", "whitespace"])
                          for item in inputs},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "skill_script": {"script": call.script, "output_kind": kind,
                                       "outputs": [item["output"] for item in inputs]}},
            render_jobs=[job],
        )

    def after_render(self, card: SkillCard, output: TemplateOutput, rendered: dict[str, bytes]) -> TemplateOutput:
        """The script's results become the hidden expectation, and the rubric keeps the items
        they can tell apart (order only when a result has an order); a script that failed, gave
        different results on the same input, or the same result on a different one, is unusable."""
        probe = json.loads(rendered["probe.json"])
        details: dict[str, Any] = {"family": FAMILY_ID, "skip_reason": UNUSABLE}
        for run in probe["inputs"]:
            if not run["ok"]:
                raise UnsuitableSkillError(f"the skill's script failed on a generated input (exit {run['exit']}): "
                                           f"{run['stderr'][-300:]}", **details, probe=probe)
            if not run["deterministic"]:
                raise UnsuitableSkillError("the skill's script gives different results on the same input", **details)
        if not probe["variant_differs"]:
            raise UnsuitableSkillError("the skill's script gives the same result for different inputs", **details)
        meta = output.metadata["skill_script"]
        results = [_result(path, meta["output_kind"], rendered[f"expected/{i}.out"]) for i, path in enumerate(meta["outputs"])]
        names = ["produced", "structure", "values"] + (["order"] if any(_has_order(r) for r in results) else [])
        items = rubric(self.spec, names)
        expected = {"tolerance": TOLERANCE, "results": results, "items": names}
        equivalences = output.equivalences if all(r["kind"] == "json" for r in results) else {
            path: ["trailing_whitespace", "whitespace"] for path in meta["outputs"]}
        return replace(output, tests=verifier_files(self.spec, expected, items), render_jobs=[], equivalences=equivalences,
                       metadata={**output.metadata, "rubric": [i.model_dump() for i in items]})


def _skill_files(card: SkillCard) -> dict[str, str]:
    """The skill's text files (its scripts and whatever they read beside them) for the probe."""
    files: dict[str, str] = {}
    total = 0
    for path in sorted(card.root.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_SKILL_FILE_BYTES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, ValueError):
            continue
        total += len(text)
        if total > MAX_SKILL_BYTES:
            raise UnsuitableSkillError("the skill's text files exceed 4 MiB; its script is not run",
                                       family=FAMILY_ID, skip_reason=UNUSABLE)
        files[path.relative_to(card.root).as_posix()] = text
    return files


def _result(path: str, kind: str, data: bytes) -> dict[str, Any]:
    text = data.decode("utf-8", "replace")
    if kind == "json":
        try:
            return {"path": path, "kind": "json", "value": json.loads(text)}
        except ValueError:
            pass
    return {"path": path, "kind": "text", "value": [" ".join(line.split()) for line in text.splitlines() if line.strip()]}


def _has_order(result: dict[str, Any]) -> bool:
    def lists(value: Any) -> list[list[Any]]:
        if isinstance(value, dict):
            return [x for v in value.values() for x in lists(v)]
        if isinstance(value, list):
            return [value, *(x for v in value for x in lists(v))]
        return []

    value = result["value"]
    found = [value] if result["kind"] == "text" else lists(value)
    return any(len({json.dumps(x, sort_keys=True) for x in items}) >= 2 for items in found)


def _solution(card: SkillCard, call: ScriptCall, inputs: list[dict[str, str]], reformat: str | None = None) -> str:
    """Like an agent: read the skill, look at the data, run the skill's script the way it says."""
    skill = f"/skills/{card.dir_name}"
    lines = ["#!/usr/bin/env bash", "# Reference solution: read the skill, look at the exports, run the skill's script.",
             "set -euo pipefail", "cd /app", f"sed -n '1,80p' {skill}/SKILL.md", "ls -R data", "mkdir -p out"]
    for item in inputs:
        lines.append(f"head -n 3 {item['input']}")
        target = item["output"] if reformat is None else f"/tmp/{Path(item['output']).name}"
        command = shlex.join(call.command(f"{skill}/{call.script}", item["input"], target))
        lines.append(command if call.writes_file else f"{command} > {shlex.quote(target)}")
        if reformat == "json":
            lines.append(f"python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], \"w\"), "
                         f"indent=1, sort_keys=True)' {shlex.quote(target)} {shlex.quote(item['output'])}")
        elif reformat == "text":
            lines.append(f"sed -e 's/$/  /' {shlex.quote(target)} > {shlex.quote(item['output'])}")
    return "\n".join(lines) + "\n"


def _instruction(card: SkillCard, inputs: list[dict[str, str]], kind: str, decoys: bool) -> str:
    listing = "\n".join(f"- `/app/{item['input']}` → `/app/{item['output']}`" for item in inputs)
    archive = ("\nOnly the files listed are current; `/app/data/archive/` holds superseded exports.\n" if decoys else "")
    fmt = "JSON" if kind == "json" else "text"
    return f"""# New exports for the {card.name} procedure

New CSV exports have arrived. The `{card.name}` skill in your skills directory is the team's standard
way of turning such an export into its result. Produce that result for each file:

{listing}
{archive}
Each result must be exactly what the skill's procedure gives for that file, with its conventions and
settings: the same fields, values and order, in its {fmt} output format. Do not change anything under `/app/data`.
"""
