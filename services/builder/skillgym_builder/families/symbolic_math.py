"""science/mathematics: a generated problem set (equations, systems, calculus, series, matrices,
ODEs with initial conditions, unit-free physics) with answers planted by construction; the agent
answers in sympy syntax, the verifier parses safely and checks mathematical equivalence. Harder
levels add problems, mixed notation, an old marking key, chained and malformed problems; the
skill's ordering rule for solution lists, where it states one, is a fact only the skill gives."""

from __future__ import annotations

import json
import random
import re

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import (
    agent_solution,
    requirements,
    rubric,
    skill_reader,
    source,
    verifier_files,
)
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.families.symbolic_exact import Problem, subst
from skillgym_builder.families.symbolic_problems import TEMPLATES
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "symbolic-math"
WORKSHEET = "problems/worksheet.md"
ARCHIVE = ("problems/archive/worksheet_2024.md", "problems/archive/marking_key_2024.json")
LIST_CUE = re.compile(r"\b(roots|solutions|solution (lists?|sets?)|eigenvalues)\b", re.I)
ASCENDING = re.compile(r"\b(ascending|increasing)\b|\b(smallest|lowest) (first|to (the )?(largest|highest))\b", re.I)
DESCENDING = re.compile(r"\b(descending|decreasing)\b|\b(largest|highest) (first|to (the )?(smallest|lowest))\b", re.I)
NOISY_KINDS = {"solve", "system", "derivative", "definite_integral", "antiderivative", "limit", "simplify", "series"}
HEADINGS = {"definite_integral": "definite integral", "ode": "ODE", "chain": "multi-step"}
REWRITES = [
    lambda m: re.sub(r"\bexp\(([^()]*)\)", r"e^(\1)", m),
    lambda m: m.replace("**", "^"),
    lambda m: re.sub(r"(?<![\w.*^/])(\d+)\*(?=[a-z(])", r"\1", m),
    lambda m: re.sub(r"\blog\(", "ln(", m),
    lambda m: re.sub(r"\b(atan|asin|acos)\(", lambda g: "arc" + g.group(1)[1:] + "(", m),
    lambda m: "infinity" if m == "oo" else m,
]


def root_order(card: SkillCard) -> Fact | None:
    """The order the skill prescribes for roots and eigenvalues: a line naming solution lists
    with an ascending or descending cue."""
    for number, raw in body_lines(card.skill_md):
        if not LIST_CUE.search(raw):
            continue
        if DESCENDING.search(raw):
            return Fact("descending", number)
        if ASCENDING.search(raw):
            return Fact("ascending", number)
    return None


def _noisy(statement: str, rng: random.Random) -> str:
    chosen = [rule for rule in REWRITES if rng.random() < 0.6] or [REWRITES[1]]

    def rewrite(span: re.Match[str]) -> str:
        math = span.group(1)
        for rule in chosen:
            math = rule(math)
        return f"`{math}`"

    return re.sub(r"`([^`]*)`", rewrite, statement)


def _malformed(rng: random.Random, flaw: str) -> Problem:
    if flaw == "nonsquare":
        kind = rng.choice(["eigenvalues", "determinant"])
        rows = [[rng.randint(-4, 4) for _ in range(3)] for _ in range(2)]
        text = (f"Find the eigenvalues of the matrix `{rows}`." if kind == "eigenvalues"
                else f"Compute the determinant of `{rows}` as a polynomial in `a`.")
        return Problem(kind, text, "malformed", {"type": "malformed"})
    base = TEMPLATES[rng.choice(["derivative", "limit", "simplify"])](rng)
    math = re.search(r"`([^`]*)`", base.statement)
    assert math is not None
    if flaw == "unbalanced":
        cut = math.group(1).rindex(")")
        broken = math.group(1)[:cut] + math.group(1)[cut + 1 :]
        text = base.statement[: math.start(1)] + broken + base.statement[math.end(1) :]
    else:  # the expression is missing altogether
        text = re.sub(r"\s+", " ", base.statement[: math.start()] + base.statement[math.end() :])
    return Problem(base.kind, text, "malformed", {"type": "malformed"})


def _chain(rng: random.Random, base: Problem, base_id: str) -> Problem:
    if base.kind == "derivative":
        lo, hi = rng.choice([("0", "1"), ("1", "2"), ("0", "2")])
        text = f"Let `g(x)` be your answer to {base_id}. Evaluate the integral of `g(x)` for `x` from `{lo}` to `{hi}`."
        answer = f"({subst(base.source, 'x', hi)}) - ({subst(base.source, 'x', lo)})"
    else:
        text = f"Let `y(x)` be your answer to {base_id}. Give the exact value of `y(1)`."
        answer = subst(base.source, "x", "1")
    return Problem("chain", text, answer, {"type": "number", "vars": []})


def _kinds(rng: random.Random, count: int, chains: int) -> list[str]:
    """``count`` kinds: solution lists always (the ordering rule bites), each kind once before any
    repeats, and enough derivatives and ODEs for the chained problems."""
    rest = sorted(set(TEMPLATES) - {"solve", "eigenvalues"})
    rng.shuffle(rest)
    kinds = ["solve", "eigenvalues", *rest]
    while len(kinds) < count:
        kinds.append(rng.choice(sorted(TEMPLATES)))
    kinds = kinds[:count]
    for slot, needed in enumerate(["derivative", "ode"][: min(chains, 2)], start=2):
        if needed not in kinds:
            kinds[slot] = needed
    return kinds


def problem_set(rng: random.Random, values: dict[str, float]) -> list[Problem]:
    """The problems in worksheet order (ids are positions): regular and malformed ones shuffled,
    chained ones last, each following up an earlier derivative or ODE."""
    chains = int(values["multi_step"])
    regular = [TEMPLATES[k](rng) for k in _kinds(rng, int(values["record_count"]), chains)]
    flaws = ["unbalanced", "nonsquare", "missing", "dangling"][: int(values["error_recovery"])]
    problems = regular + [_malformed(rng, f) for f in flaws if f != "dangling"]
    rng.shuffle(problems)
    sources = [i for i, p in enumerate(problems) if p.kind in ("derivative", "ode") and p.answer != "malformed"]
    for n in range(chains):
        index = sources[n % len(sources)]
        problems.append(_chain(rng, problems[index], f"P{index + 1:02d}"))
    if "dangling" in flaws:
        missing = f"P{len(problems) + rng.randint(3, 9):02d}"
        problems.append(Problem("chain", f"Let `g(x)` be your answer to {missing}. Evaluate the integral of `g(x)` "
                                         "for `x` from `0` to `1`.", "malformed", {"type": "malformed"}))
    noise = float(values["noise_level"])
    for problem in problems:
        if problem.kind in NOISY_KINDS and rng.random() < noise:
            problem.statement = _noisy(problem.statement, rng)
    return problems


def worksheet(problems: list[Problem], title: str) -> str:
    lines = [f"# {title}", "", "Work every problem exactly. Problem ids are referred to by later problems.", ""]
    for index, problem in enumerate(problems, start=1):
        lines += [f"### P{index:02d} ({HEADINGS.get(problem.kind, problem.kind)})", problem.statement, ""]
    return "\n".join(lines)


def _archive(rng: random.Random, problems: list[Problem]) -> dict[str, bytes]:
    """Last year's sheet with the same kinds in the same places, and its marking key: keyed by
    the same ids, so copying it looks plausible and is wrong."""
    old = [TEMPLATES[p.kind](rng) if p.kind in TEMPLATES else p for p in problems]
    current = {json.dumps(p.answer, sort_keys=True) for p in problems}
    key = {f"P{i:02d}": p.answer for i, p in enumerate(old, start=1)
           if p.answer != "malformed" and json.dumps(p.answer, sort_keys=True) not in current}
    return {ARCHIVE[0]: worksheet(old, "Problem set (2024, archived)").encode(),
            ARCHIVE[1]: (json.dumps({"key": key}, indent=2) + "\n").encode()}


class SymbolicMathFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        order_fact = root_order(card)
        order = str(order_fact.value) if order_fact else None
        problems = problem_set(rng, values)
        workspace = {WORKSHEET: worksheet(problems, "Problem set: algebra, calculus and linear algebra").encode()}
        if values["distractor_files"]:
            workspace.update(_archive(rng, problems))
        expected = {"order": order, "problems": {
            f"P{i:02d}": {"kind": p.kind, "answer": p.answer, **p.check} for i, p in enumerate(problems, start=1)}}
        claim = SkillClaim(
            claimed=order_fact is not None, facts={"root_order": order_fact.source()} if order_fact else {},
            reason="the order of roots and eigenvalues comes from the skill" if order_fact
            else "the skill sets no ordering rule; the task needs the library, not the skill")
        items = rubric(self.spec, ["answers", "form"])
        argument = json.dumps({"worksheet": WORKSHEET, "order_from_skill": order is not None})
        helpers = {**skill_reader(), "mathsheet.py": source(FAMILY_ID, "mathsheet.py")}
        solve = agent_solution(card, inspect=[f"sed -n '1,30p' {WORKSHEET}"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_sympy.py"), name="answer.py",
                               run=f"python3 /tmp/work/answer.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls -R problems"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_methods.py"), name="answer.py",
                                     run=f"python3 /tmp/work/answer.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        equivalences: dict[str, list[str]] = {k: list(v) for k, v in self.spec.equivalences.items()}
        if order is None:
            equivalences = {k: sorted({*v, "reorder_lists"}) for k, v in equivalences.items()}
        return TemplateOutput(
            instruction=_instruction(card, len(problems), order is not None, bool(values["noise_level"])),
            workspace=workspace,
            protected=sorted(workspace),
            tests=verifier_files(self.spec, expected, items,
                                 {"mathcheck.py": source(FAMILY_ID, "mathcheck.py").encode()}),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"other-solvers": alternative},
            blueprint=self.spec.blueprint,
            params={"problems": len(problems), "kinds": sorted({p.kind for p in problems})},
            requirements=reqs,
            equivalences=equivalences,
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _instruction(card: SkillCard, count: int, order_from_skill: bool, noisy: bool) -> str:
    order = (f"List them in the order the `{card.name}` skill in your skills directory prescribes for solution lists."
             if order_from_skill else "Any order.")
    notation = " Its notation is not uniform." if noisy else ""
    return f"""# Answer the problem set

`/app/{WORKSHEET}` holds {count} problems (P01 to P{count:02d}).{notation} Solve them exactly and write
`/app/out/answers.json` as `{{"answers": {{"P01": ..., "P02": ..., ...}}}}`, one entry per problem.

Write every expression as a string in sympy's syntax (what `str()` prints): `+ - * / **`, functions such as
`sqrt exp log sin cos tan asin acos atan`, constants `pi E I`; for example `3*sqrt(2)/2` or
`x**2*exp(-x)`. Closed forms only: no `Integral`, `Derivative`, `Limit`, `O(...)` or other unevaluated
object, and no decimals except in physics answers (there within 1e-6 relative).

- solve, eigenvalues: a list of strings, each distinct real solution or eigenvalue once. {order}
- system: an object mapping each unknown to its value.
- derivative, antiderivative (any constant of integration), ODE (the `y(x)` that satisfies the initial
  conditions), determinant (a polynomial in `a`): one expression.
- simplify: one expression, as short as the simplest form.
- series: the Taylor polynomial up to the requested power, without the order term.
- definite integral, limit, physics, multi-step: one exact value (multi-step problems reuse another answer).
- A problem that cannot be posed as written (unreadable math, a missing expression, a reference to a
  problem that does not exist, a matrix with no such property): the string `"malformed"`.

Do not modify anything under `/app/problems/`.
"""
