"""development/version-control: a real git repository generated per instance (see
``git_history``) whose test suite broke somewhere after a known-good tag. The agent bisects to
the first bad commit, reports it, and commits a fix on a branch following the commit
conventions the skill prescribes; by knob it also traces a leaked credential and writes a
changelog between two tags. The verifier recomputes everything with git on the agent's
repository, confined."""

from __future__ import annotations

import datetime
import json
import random
import re
from typing import Any

from skillgym_builder.families import git_conventions
from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_helpers, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.git_history import History, build_history
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "git-forensics"
TICKET_PREFIXES = ["PAY", "SHOP", "OPS", "CORE", "WH"]
FIXERS = [("Robin Castell", "robin.castell@example.net"), ("Noor Haddad", "noor.haddad@example.net"),
          ("Elias Brandt", "elias.brandt@example.net")]
RANGE = ("v1.1.0", "v1.2.0")
GIT_WORK = re.compile(r"\bgit\b|\bcommits?\b|\bbranch", re.I)


def _iso(timestamp: int, offset: str) -> str:
    sign = -1 if offset.startswith("-") else 1
    zone = datetime.timezone(sign * datetime.timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
    return datetime.datetime.fromtimestamp(timestamp, zone).isoformat()


def expected_values(history: History, values: dict[str, float], rule: dict[str, Any],
                    identity: dict[str, str]) -> dict[str, Any]:
    bad = history.commits[history.first_bad]
    target = history.target
    expected: dict[str, Any] = {
        "first_bad": {"commit": bad.oid, "author_name": bad.author.name, "author_email": bad.author.email,
                      "timestamp": bad.author.timestamp, "author_date": _iso(bad.author.timestamp, bad.author.offset),
                      "files": bad.changed},
        # the refs as they were, in one table (the tip of main is the fix's required parent)
        "refs": "".join(f"{oid} {ref}\n" for ref, oid in sorted(history.refs.items())),
        "convention": rule, "identity": f"{identity['name']} <{identity['email']}>",
        "test_module": f"tests.test_{target.name}", "module": f"{history.package}.{target.name}",
        "function": target.function, "cases": [[list(a), r] for a, r in history.visible + history.hidden],
    }
    if values["multi_step"]:
        expected["leak"] = dict(history.leak)
    if values["long_horizon"]:
        expected["changelog"] = {"from": RANGE[0], "to": RANGE[1], "groups": history.changelog(*RANGE)}
    return expected


class GitForensicsFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        fit = assess(self.spec, SkillEvidence.of(card))
        if fit.fits and fit.code == "subcategory" and not GIT_WORK.search(card.skill_md):
            return Fit(family=self.spec.id, fits=False, code="no_git_work",
                       reason="the skill is classified version-control but never mentions git, commits or branches")
        return fit

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        history = build_history(rng, values)
        conventions = git_conventions.read(card)
        ticket = f"{rng.choice(TICKET_PREFIXES)}-{rng.randint(100, 9999)}"
        name, email = rng.choice(FIXERS)
        identity = {"name": name, "email": email}
        rule = git_conventions.rules(conventions, ticket)
        slug = f"restore-{history.target.function.replace('_', '-')}"
        facts = conventions.facts()
        claimed = bool(facts) and not git_conventions.naive_guess_passes(rule, slug)
        claim = SkillClaim(
            claimed=claimed, facts=facts,
            reason="the fix branch's name and the commit message conventions come from the skill" if claimed
            else "the instruction states every convention the fix must follow; the skill teaches the git work")
        names = ["first_bad", "fix_commit", "fix_works"] + (["leak"] if values["multi_step"] else []) \
            + (["changelog"] if values["long_horizon"] else [])
        items = rubric(self.spec, names)
        expected = expected_values(history, values, rule, identity)
        task = {"test": f"tests.test_{history.target.name}", "good": "v1.0.0", "ticket": ticket, "slug": slug,
                "identity": identity, "module_path": f"src/{history.package}/{history.target.name}.py",
                "from_skill": _from_skill(conventions), "default_branch": git_conventions.DEFAULT_BRANCH, "leak": bool(values["multi_step"]),
                "changelog": list(RANGE) if values["long_horizon"] else None}
        argument = json.dumps(task)
        inspect = ["git -C repo log --oneline --graph --all | head -60", "git -C repo tag"]
        helpers = skill_helpers(FAMILY_ID, "conventions.py")
        solve = agent_solution(card, inspect=inspect, helpers=helpers, script=source(FAMILY_ID, "solve_bisect.py"),
                               name="forensics.py", run=f"python3 /tmp/work/forensics.py '{argument}'")
        alternative = agent_solution(card, inspect=inspect, helpers=helpers, script=source(FAMILY_ID, "solve_walk.py"),
                                     name="forensics.py", run=f"python3 /tmp/work/forensics.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, history, values, conventions, ticket, identity),
            workspace=history.workspace,
            protected=history.protected,
            tests=verifier_files(self.spec, expected, items, {"harness.py": source(FAMILY_ID, "harness.py").encode()}),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"rev-list-walk": alternative},
            blueprint=self.spec.blueprint,
            params={"commits": len(history.commits), "target": history.target.name,
                    "untestable_commits": len(history.broken), "decoys": int(values["noise_level"])},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _from_skill(conventions: git_conventions.Conventions) -> list[str]:
    return [key for key in ("branch", "header", "footer", "signoff") if getattr(conventions, key) is not None]


def _conventions_text(card: SkillCard, conventions: git_conventions.Conventions, ticket: str) -> str:
    from_skill = _from_skill(conventions)
    parts = []
    if "branch" not in from_skill:
        parts.append(f"Name the branch `{git_conventions.DEFAULT_BRANCH}` (`<slug>`: a few lower-case words joined "
                     "by hyphens).")
    if "header" not in from_skill:
        parts.append("Write the commit header in Conventional Commits form with type `fix` (`fix: <summary>` or "
                     "`fix(<scope>): <summary>`).")
    labels = {"branch": "the branch name", "header": "the commit header", "footer": "the ticket footer",
              "signoff": "the sign-off"}
    if from_skill:
        named = [labels[k] for k in from_skill]
        listed = named[0] if len(named) == 1 else ", ".join(named[:-1]) + " and " + named[-1]
        parts.append(f"For {listed}, follow the conventions of the `{card.name}` "
                     "skill in your skills directory.")
    return " ".join(parts) + f" The ticket is `{ticket}`."


def _instruction(card: SkillCard, history: History, values: dict[str, float],
                 conventions: git_conventions.Conventions, ticket: str, identity: dict[str, str]) -> str:
    target = history.target
    broken = ("\n\nFor a stretch of the history the package does not import at all; a commit where the test cannot "
              "run tells you nothing about this regression." if values["error_recovery"] else "")
    extra_keys = (',\n  "leak": {"path": "<file, relative to the repository root>", "added_in": "<commit id>", '
                  '"removed_in": "<commit id>"}' if values["multi_step"] else "") + (
        f',\n  "changelog": {{"from": "{RANGE[0]}", "to": "{RANGE[1]}", "groups": {{"<type>": ["<commit id>", ...]}}}}'
        if values["long_horizon"] else "")
    leak = ("\n- `leak`: someone committed a credential (an API token in an env file) and a later commit removed "
            "the file. Name that file and the commits that added and removed it. Do not copy the credential "
            "itself anywhere." if values["multi_step"] else "")
    changelog = (f"\n- `changelog`: every commit reachable from `{RANGE[1]}` but not from `{RANGE[0]}`, merge commits "
                 "left out, grouped by its Conventional Commits type (the word before the optional `(scope)` and the "
                 "colon: `feat`, `fix`, `docs`, ...; `other` for a subject without one)." if values["long_horizon"] else "")
    return f"""# Bisect a regression and ship the fix

`/app/repo` is the git repository of `{history.package}`, a small helper library. On branch `main`,
`python3 -m unittest {f"tests.test_{target.name}"}` (run from the repository root) fails; at tag `v1.0.0` it
passed.{broken}

1. Find the first bad commit: the commit that introduced this failure.
2. Fix it on a new branch that starts at the tip of `main`: exactly one new commit, changing only files under
   `src/`, that makes the test pass again. Author and commit it as `{identity['name']} <{identity['email']}>`.
   {_conventions_text(card, conventions, ticket)}
   Leave that branch checked out with a clean working tree (Python's compiled caches aside).
3. Write `/app/out/forensics.json`:

```
{{
  "first_bad": {{"commit": "<commit id>", "author_name": "...", "author_email": "...",
                "author_date": "<ISO 8601 with its UTC offset>", "files": ["<paths it changed>"]}},
  "fix": {{"branch": "<your branch>", "commit": "<commit id of the fix>"}}{extra_keys}
}}
```

Commit ids are full 40-character hex ids; paths are relative to the repository root.{leak}{changelog}

Do not move `main`, the tags or the other branches, and do not rewrite, repack or prune the existing history.
"""
