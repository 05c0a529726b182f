"""Wrong solutions written by a model: scripts that look like honest solutions but break one
acceptance criterion. They run like the reference solution; one the verifier accepts is a
surviving mutant, unless its outputs are the reference's (the model failed to be wrong)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from skillgym_core.contracts.task import TaskDir
from skillgym_core.errors import SkillGymError
from skillgym_core.llm import LLMClient

from skillgym_reviewer.gates.mutation.model import TrialResult
from skillgym_reviewer.gates.mutation.runs import stopped
from skillgym_reviewer.gates.mutation.trials import Trial, TrialContext

PROMPT = """You test the verifier of a practice task for laxity. You see the instruction, the
acceptance criteria, the starting workspace (the current directory, /app, when your script
runs), the reference solution (its files are under /solution) and the outputs it produces.
Write {count} bash scripts. Each must look like an honest solution and write every output the
instruction asks for, but violate exactly one acceptance criterion in a way a careless check
could miss: a total off by a little, one record missing or repeated, a wrong but well-formed
value, items in the wrong order where order matters. Break a different criterion in each.
Answer with one JSON object only:
{{"solutions": [{{"criterion": "<the criterion the script breaks>", "script": "<the bash script>"}}]}}"""
MAX_FILE_CHARS = 3000
MAX_SCRIPT_CHARS = 20000


@dataclass(frozen=True)
class WrongSolution:
    criterion: str
    script: str


def _shown(files: dict[str, bytes]) -> dict[str, str]:
    return {rel: data[:MAX_FILE_CHARS].decode("utf-8", "replace") for rel, data in list(files.items())[:20]}


def parse_solutions(text: str, count: int) -> list[WrongSolution]:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return []
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return []
    raw = data.get("solutions") if isinstance(data, dict) else None
    found = []
    for item in raw if isinstance(raw, list) else []:
        if isinstance(item, dict) and isinstance(item.get("script"), str) and item["script"].strip():
            found.append(WrongSolution(str(item.get("criterion") or "unnamed")[:120], item["script"][:MAX_SCRIPT_CHARS]))
    return found[:count]


class WrongSolutionWriter:
    def __init__(self, client: LLMClient, count: int) -> None:
        self.client = client
        self.count = count

    def write(self, task: TaskDir, workspace: dict[str, bytes], solution: dict[str, bytes],
              outputs: dict[str, bytes]) -> tuple[list[WrongSolution], str]:
        """The model's wrong solutions and a note; no solutions (never an error) when the model
        is unreachable or answers with something else."""
        meta = task.config().metadata
        context: dict[str, Any] = {
            "instruction": task.instruction(),
            "acceptance_criteria": meta.blueprint.get("acceptance_criteria", []),
            "workspace": _shown(workspace), "reference_solution": _shown(solution), "reference_outputs": _shown(outputs),
        }  # fmt: skip
        try:
            response = self.client.chat(
                [{"role": "system", "content": PROMPT.format(count=self.count)},
                 {"role": "user", "content": json.dumps(context, indent=1)}],
                response_format={"type": "json_object"},
            )  # fmt: skip
        except SkillGymError as exc:
            return [], f"the model wrote no wrong solutions: {exc.reason}: {str(exc)[:200]}"
        solutions = parse_solutions(response.content or "", self.count)
        return solutions, "" if solutions else "the model's answer held no wrong solutions"


def wrong_solution_trial(ctx: TrialContext, index: int, solution: WrongSolution) -> Trial:
    name = f"llm_solution:{index + 1}:{solution.criterion}"

    def trial() -> TrialResult:
        workspace = ctx.runner.fresh_workspace(ctx.task, ctx.prober.workdir)
        try:
            run = ctx.scripts.run(solution.script, workspace, name=f"wrong-{index + 1}.sh")
            if ctx.same_outputs(workspace):
                return TrialResult(name, "llm_solution", "equivalent", note="its outputs are the reference's")
            result = ctx.judged(name, "llm_solution", workspace)
            if not run.ok:
                result.note = f"the script stopped: {stopped(run)}"
            return result
        finally:
            ctx.prober.discard(workspace)

    return Trial(name, "llm_solution", trial)
