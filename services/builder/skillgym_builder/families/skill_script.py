"""Any category: a skill that ships a script run on one input (Python, or shell as SKILL.md shows
it) gets a task whose shortest path is that script. Inputs of the kind it reads (CSV, TSV, JSON,
YAML and Excel workbooks with the fields it reads; Markdown, HTML, text, logs, images, Word
documents, PowerPoint decks, a project directory) are
generated per instance; the builder runs the script on them in the sandbox (twice, and on inputs
drawn again) and hides its result as the expectation; the agent is told the goal and where
results go, never the script or its options."""

from __future__ import annotations

import base64
import functools
import json
import random
import shlex
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from skillgym_core import clock

from skillgym_builder.errors import UnsuitableSkillError
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import office_files, script_data, script_documents, script_exemplars
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence
from skillgym_builder.families.render import RenderJob
from skillgym_builder.families.script_cli import ScriptCall, ScriptUnusable, analyse
from skillgym_builder.families.script_inputs import NOUN, SUFFIX
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
                   reason=f"the skill ships {call.script}, run on {NOUN[call.input_kind]} as its {call.origin} shows",
                   evidence=[f"script:{call.script}", *(f"column:{c.name}:{c.kind}" for c in call.columns)])

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        try:
            call = analyse(card)
        except ScriptUnusable as exc:
            raise UnsuitableSkillError(str(exc), family=FAMILY_ID, skip_reason=exc.code) from exc
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        count, noise = int(values["record_count"]), float(values["noise_level"])
        snippets = script_documents.fenced_blocks(card.skill_md)
        inputs: list[dict[str, Any]] = []
        for period in rng.sample(PERIODS, k=int(values["long_horizon"])):
            stem = f"{call.example_stem}_{period}"
            path = f"data/{stem}{SUFFIX[call.input_kind]}"
            inputs.append({"input": path, "output": f"out/{stem}{call.suffix}",
                           "files": material(call, path, rng, count, noise, snippets)})
        # the second variant is longer too: a script that reports only a table's shape still tells it apart
        variants = [{**inputs[0], "files": material(call, inputs[0]["input"], random.Random(f"{seed}:variant{n or ''}"),
                                                    count + 3 * n, noise, snippets)} for n in range(2)]
        workspace = {rel: _bytes(data) for item in inputs for rel, data in item["files"].items()}
        protected = sorted(workspace)
        for index in range(int(values["distractor_files"])):
            item = inputs[index % len(inputs)]
            stale = f"data/archive/{Path(item['input']).stem}_v{index + 1}{SUFFIX[call.input_kind]}"
            workspace.update({rel: _bytes(data) for rel, data in material(call, stale, rng, max(10, count // 4), noise, snippets).items()})
        if values["distractor_files"]:
            workspace["data/archive/README.txt"] = ARCHIVE_NOTE.encode()
        job = RenderJob(
            script=source(FAMILY_ID, "probe.py"),
            params={"files": _skill_files(card), "helpers": {"clock.py": _clock_source()}, "script": call.script,
                    "argv": list(call.argv), "interpreter": call.interpreter,
                    "writes_file": call.writes_file, "inputs": [_for_probe(item) for item in inputs],
                    "variants": [_for_probe(variant) for variant in variants], "timeout": 60},
            requirements=call.packages,
            produces=("probe.json", *(f"expected/{i}.out" for i in range(len(inputs)))),
            timeout_s=60.0 * (2 * len(inputs) + 2) + 30,
        )
        claim = SkillClaim(claimed=True, reason=f"the expected results are what the skill's own {call.script} computes; "
                           "its options and conventions are stated only in the skill",
                           facts={"script": call.script, "argv": list(call.argv)})
        reqs, skipped = requirements(self.spec, card, call.packages)
        kind = "json" if call.output_kind == "json" else "text"
        return TemplateOutput(
            instruction=_instruction(card, call, inputs, kind, bool(values["distractor_files"])),
            workspace=workspace,
            protected=protected,
            tests={},
            solution_steps=[],
            solve_script=_solution(card, call, inputs),
            alternative_scripts={"reformatted": _solution(card, call, inputs, reformat=kind)},
            blueprint=self.spec.blueprint,
            params={"script": call.script, "origin": call.origin, "input_kind": call.input_kind, "inputs": len(inputs), "records": count,
                    "columns": [c.name for c in call.columns]},
            requirements=reqs,
            equivalences={item["output"]: (["reformat_json"] if kind == "json" else ["trailing_whitespace", "whitespace"])
                          for item in inputs},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "skill_script": {"script": call.script, "output_kind": kind, "input_kind": call.input_kind,
                                       "inputs": [{"input": i["input"], "output": i["output"]} for i in inputs],
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
            if not run["deterministic"] and not run.get("same_but_order"):
                raise UnsuitableSkillError("the skill's script gives different results on the same input", **details)
        if not probe["variant_differs"]:
            raise UnsuitableSkillError("the skill's script gives the same result for different inputs", **details)
        for i in range(len(probe["inputs"])):
            try:
                rendered[f"expected/{i}.out"].decode("utf-8")
            except UnicodeDecodeError:
                raise UnsuitableSkillError("the skill's script writes a binary file, not text a result can be compared as",
                                           **details) from None
        runs = [*probe["inputs"], probe.get("variant_run", {})]
        on_stderr = any(run.get("stream") == "stderr" for run in runs)
        if on_stderr and not all(run.get("stream") == "stderr" or run.get("quiet", True) for run in runs):
            raise UnsuitableSkillError("the skill's script reports on standard error for some inputs and writes "
                                       "warnings there for others", **details)
        call = analyse(card)
        if probe.get("result_from") == "beside":
            output = _beside(card, call, output, [run["side"] for run in probe["inputs"]])
        meta = output.metadata["skill_script"]
        verdict = any(run["exit"] for run in probe["inputs"])
        if verdict:
            # The script's verdict exit ("issues found") must not stop the reference solution.
            meta = {**meta, "verdict_exit": True, "report_on_stderr": on_stderr}
        results = [_result(path, meta["output_kind"], rendered[f"expected/{i}.out"]) for i, path in enumerate(meta["outputs"])]
        if all(r["kind"] == "json" for r in results):
            output = replace(output, metadata={**output.metadata, "skill_script": {**meta, "output_kind": "json"}})
            if verdict:
                output = _with_solutions(card, call, output)
        else:
            # A script that writes JSON only with an option the example does not pass gives text: so does the task.
            output = _as_text(card, call, replace(output, metadata={**output.metadata, "skill_script": meta}))
            meta = output.metadata["skill_script"]
            results = [{**r, "path": path} for r, path in zip(results, meta["outputs"], strict=True)]
        # An order that follows how the files were laid down or how a file system lists a directory,
        # not the data, is not the skill's to ask for.
        stable = all(run["deterministic"] for run in probe["inputs"]) and meta["input_kind"] != "tree"
        names = ["produced", "structure", "values"] + (["order"] if stable and any(_has_order(r) for r in results) else [])
        items = rubric(self.spec, names)
        expected = {"tolerance": TOLERANCE, "results": results, "items": names}
        helpers = {"clock.py": _clock_source().encode()}
        return replace(output, tests=verifier_files(self.spec, expected, items, helpers), render_jobs=[],
                       metadata={**output.metadata, "rubric": [i.model_dump() for i in items]})


def _as_text(card: SkillCard, call: ScriptCall, output: TemplateOutput) -> TemplateOutput:
    """The task rewritten for a script whose result turned out to be text: the instruction says
    so, the reformatted alternative pads lines instead of re-indenting JSON, and a result the
    script prints (its name is the task's to choose) ends in ``.txt`` rather than ``.json``."""
    inputs = [dict(item) for item in output.metadata["skill_script"]["inputs"]]
    if not call.writes_file and not call.output_suffix:
        for item in inputs:
            if "beside" not in item:  # a file the script names keeps its name
                item["output"] = str(Path(item["output"]).with_suffix(".txt"))
    return _rewritten(card, call, output, inputs, "text")


def _beside(card: SkillCard, call: ScriptCall, output: TemplateOutput, sides: list[str]) -> TemplateOutput:
    """The task rewritten for a script whose result is the file it writes beside its input (what
    it prints is the same whatever the input): each result goes where the task asks, under the
    name the script gives it."""
    inputs = [{**item, "output": f"out/{Path(side).name}", "beside": side}
              for item, side in zip(output.metadata["skill_script"]["inputs"], sides, strict=True)]
    return _rewritten(card, call, output, inputs, "json" if all(side.endswith(".json") for side in sides) else "text")


def _rewritten(card: SkillCard, call: ScriptCall, output: TemplateOutput, inputs: list[dict[str, Any]],
               kind: str) -> TemplateOutput:
    """The task with its inputs' results where ``inputs`` now puts them, asked for as ``kind``:
    instruction, equivalences and solutions rendered again."""
    decoys = ARCHIVE_NOTE.encode() in output.workspace.values()
    return _with_solutions(card, call, replace(
        output, instruction=_instruction(card, call, inputs, kind, decoys),
        equivalences={item["output"]: ["reformat_json"] if kind == "json" else ["trailing_whitespace", "whitespace"]
                      for item in inputs},
        metadata={**output.metadata, "skill_script": {**output.metadata["skill_script"], "inputs": inputs,
                                                       "output_kind": kind, "outputs": [item["output"] for item in inputs]}}))


def _with_solutions(card: SkillCard, call: ScriptCall, output: TemplateOutput) -> TemplateOutput:
    """The reference and the reformatted alternative, rendered for the task as it now stands."""
    meta = output.metadata["skill_script"]
    verdict, stderr = bool(meta.get("verdict_exit")), bool(meta.get("report_on_stderr"))
    return replace(output, solve_script=_solution(card, call, meta["inputs"], verdict=verdict, stderr=stderr),
                   alternative_scripts={"reformatted": _solution(card, call, meta["inputs"], reformat=meta["output_kind"],
                                                                 verdict=verdict, stderr=stderr)})


def material(call: ScriptCall, path: str, rng: random.Random, count: int, noise: float,
             snippets: Sequence[tuple[str, str]] = ()) -> dict[str, str | bytes]:
    """The workspace files of one input at ``path`` (a directory, for a project snapshot); Markdown
    inputs carry the skill's own code examples among their sections."""
    kind = call.input_kind
    if kind == "tree":
        return {f"{path}/{rel}": text for rel, text in script_documents.tree(rng, count, noise, call.mentions,
                                                                               dict(call.document)).items()}
    if kind in ("json", "yaml") and call.exemplars:
        return {path: script_exemplars.document(call.exemplars[0], kind, rng, noise)}
    if kind in ("json", "yaml"):
        write = script_data.json_text if kind == "json" else script_data.yaml_text
        return {path: write(call.columns, rng, count, noise, call.container, call.document)}
    blanks = noise / 2 if call.missing_values else 0.0
    if kind == "csv":
        return {path: script_data.dataset(call.columns, rng, count, noise, blanks)}
    if kind == "tsv":
        return {path: script_data.tsv(call.columns, rng, count, noise, blanks)}
    if kind == "xlsx":
        return {path: office_files.workbook(call.columns, rng, count, noise, blanks)}
    if kind == "docx":
        return {path: office_files.document(rng, count, noise)}
    if kind == "pptx":
        return {path: office_files.deck(rng, count, noise)}
    if kind == "markdown":
        return {path: script_documents.markdown(rng, count, noise, snippets)}
    if kind == "html":
        return {path: script_documents.page(rng, noise, call.exemplars)}
    if kind == "image":
        return {path: script_documents.image(rng)}
    return {path: (script_documents.log if kind == "log" else script_documents.text)(rng, count, noise)}


def _bytes(data: str | bytes) -> bytes:
    return data if isinstance(data, bytes) else data.encode()


def _for_probe(item: dict[str, Any]) -> dict[str, Any]:
    """An input as the probe's parameters carry it: binary files (images) in base64."""
    files = {rel: {"base64": base64.b64encode(data).decode()} if isinstance(data, bytes) else data
             for rel, data in item["files"].items()}
    return {**item, "files": files}


@functools.cache
def _clock_source() -> str:
    """The stamp masking the probe and the verifier share, shipped as its source."""
    return Path(clock.__file__).read_text(encoding="utf-8")


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


def _solution(card: SkillCard, call: ScriptCall, inputs: list[dict[str, Any]], reformat: str | None = None,
              verdict: bool = False, stderr: bool = False) -> str:
    """Like an agent: read the skill, look at the data, run the skill's script the way it says."""
    skill = f"/skills/{card.dir_name}"
    lines = ["#!/usr/bin/env bash", "# Reference solution: read the skill, look at the exports, run the skill's script.",
             "set -euo pipefail", "cd /app", f"sed -n '1,80p' {skill}/SKILL.md", "ls -R data", "mkdir -p out"]
    for item in inputs:
        look = {"tree": "ls -R", "image": "ls -l", "xlsx": "ls -l", "docx": "ls -l", "pptx": "ls -l"}.get(call.input_kind, "head -n 3")
        lines.append(f"{look} {item['input']}")
        target = item["output"] if reformat is None else f"/tmp/{Path(item['output']).name}"
        command = shlex.join(call.command(f"{skill}/{call.script}", item["input"], target))
        if "beside" in item:  # the script writes its result next to the input
            command = f"{command} > /dev/null && mv {shlex.quote(item['beside'])} {shlex.quote(target)}"
        elif not call.writes_file:
            command = f"{command} > {shlex.quote(target)}{' 2>&1' if stderr else ''}"
        # exit status 1 is the script's verdict on this input (it found issues), with its result written
        lines.append(f"{command} || [ $? -eq 1 ]" if verdict else command)
        if reformat == "json":
            lines.append(f"python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], \"w\"), "
                         f"indent=1, sort_keys=True)' {shlex.quote(target)} {shlex.quote(item['output'])}")
        elif reformat == "text":
            lines.append(f"sed -e 's/$/  /' {shlex.quote(target)} > {shlex.quote(item['output'])}")
    return "\n".join(lines) + "\n"


def _instruction(card: SkillCard, call: ScriptCall, inputs: list[dict[str, Any]], kind: str, decoys: bool) -> str:
    listing = "\n".join(f"- `/app/{item['input']}` → `/app/{item['output']}`" for item in inputs)
    archive = ("\nOnly the inputs listed are current; `/app/data/archive/` holds superseded copies.\n" if decoys else "")
    fmt = "JSON" if kind == "json" else "text"
    goal = f"\nWhat that result is, in the words of the skill's own tool: \"{call.purpose}\"\n" if call.purpose else ""
    return f"""# New {NOUN[call.input_kind]} for the {card.name} procedure

New {NOUN[call.input_kind]} have arrived. The `{card.name}` skill in your skills directory is the team's
standard way of turning each of them into its result. Produce that result for each one:
{goal}
{listing}
{archive}
Each result must be exactly what the skill's procedure gives for that file, with its conventions and
settings: the same fields, values and order, in its {fmt} output format. Do not modify the files under `/app/data`.
"""
