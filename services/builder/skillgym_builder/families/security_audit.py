"""security: audit a generated application repository for insecure defaults (fail-open secret
fallbacks, hard-coded credentials, weak crypto, permissive flags, weak TLS) planted at known
lines next to safe look-alikes; what is out of scope comes from the skill's exclusion rules."""

from __future__ import annotations

import json
import random
import re

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_helpers, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.security_audit_repo import CATEGORIES, PRODUCTION_ENV, SEVERITIES, Exclusions, generate
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "security-audit"
DEFAULT_EXCLUSIONS = Exclusions(dirs=("tests", "docs"), suffixes=(".example",))
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
EXCLUSION_TITLE = re.compile(r"\bnot\b|\bexclu|\bskip|\bignore|out of scope|false positives?", re.I)
QUOTED_DIR = re.compile(r"`([\w.-]+)/`")
BARE_DIR = re.compile(r"(?<![\w/`.-])([A-Za-z_][\w-]*)/(?=[\s,;:)]|$)")
QUOTED_SUFFIX = re.compile(r"`(\.[A-Za-z][\w-]*)`")
APP_DIRS = {"app", "web", "src", "config", "deploy", "out"}


def exclusion_rules(card: SkillCard) -> Fact | None:
    """The folders and file suffixes a section like "When NOT to use" or "Exclusions" puts out of
    scope: backticked ``name/`` and ``.suffix`` tokens (and bare ``name/`` words) in its lines."""
    dirs: list[str] = []
    suffixes: list[str] = []
    first = 0
    inside = False
    for number, raw in body_lines(card.skill_md):
        heading = _HEADING.match(raw)
        if heading:
            inside = bool(EXCLUSION_TITLE.search(heading.group(1)))
            continue
        if not inside:
            continue
        found_dirs = QUOTED_DIR.findall(raw) + BARE_DIR.findall(re.sub(r"`[^`]*`", "", raw))
        found_suffixes = QUOTED_SUFFIX.findall(raw)
        if (found_dirs or found_suffixes) and not first:
            first = number
        dirs += [d for d in found_dirs if d not in APP_DIRS]
        suffixes += found_suffixes
    if not dirs or not suffixes:
        return None
    return Fact({"dirs": list(dict.fromkeys(dirs)), "suffixes": list(dict.fromkeys(suffixes))}, first)


class SecurityAuditFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        fact = exclusion_rules(card)
        if fact is not None and isinstance(fact.value, dict):
            exclusions = Exclusions(tuple(fact.value["dirs"]), tuple(fact.value["suffixes"]))
            claim = SkillClaim(claimed=True, facts={"exclusion_rules": fact.source()},
                               reason="which folders and file kinds are out of scope comes from the skill")
        else:
            exclusions = DEFAULT_EXCLUSIONS
            claim = SkillClaim(claimed=False, reason="the skill names no out-of-scope locations; the instruction does")
        repo = generate(rng, values, exclusions)
        names = ["findings", "no_false_positives", "severity"] + (["skipped"] if repo.skipped else [])
        items = rubric(self.spec, names)
        expected = {"findings": repo.findings, "skipped": repo.skipped, "decoy_files": repo.decoy_files,
                    "categories": list(CATEGORIES), "severities": list(SEVERITIES)}
        task = {"rules_from_skill": claim.claimed, "dirs": list(exclusions.dirs), "suffixes": list(exclusions.suffixes)}
        argument = json.dumps(task)
        helpers = skill_helpers(FAMILY_ID, "audit_rules.py")
        solve = agent_solution(card, inspect=["find . -type f -not -path './out/*' | sort"], helpers=helpers,
                               script=source(FAMILY_ID, "solve_ast.py"), name="audit.py",
                               run=f"python3 /tmp/work/audit.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls -a . app web/src"], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_lines.py"), name="audit.py",
                                     run=f"python3 /tmp/work/audit.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, None if claim.claimed else exclusions, bool(repo.skipped)),
            workspace=repo.files,
            protected=sorted(repo.files),
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"line-scanner": alternative},
            blueprint=self.spec.blueprint,
            params={"files": len(repo.files), "findings": len(repo.findings), "decoy_files": len(repo.decoy_files),
                    "unreadable": len(repo.skipped)},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _instruction(card: SkillCard, exclusions: Exclusions | None, unreadable: bool) -> str:
    if exclusions is None:
        scope = (f"Leave out everything the `{card.name}` skill in your skills directory puts out of scope (the "
                 "folders and example/template file kinds it says not to report): nothing there is a finding.")
    else:
        folders = ", ".join(f"`{d}/`" for d in exclusions.dirs)
        kinds = ", ".join(f"`*{s}`" for s in exclusions.suffixes)
        scope = f"Leave out test fixtures and documentation (anything under {folders}) and example files ({kinds})."
    broken = ("\nA file that is not valid UTF-8, or a `.py` file that is not valid Python, cannot be audited: list it "
              "under `skipped` and report nothing from it.\n") if unreadable else ""
    return f"""# Audit the application for insecure defaults

Before the release of the application in `/app`, security wants every place where it would run insecurely
because of a default, a hard-coded value or a permissive setting. Audit the Python and JavaScript/TypeScript
sources, the env files, the YAML settings, the `Dockerfile` and the nginx configuration.

{scope}

Report each insecure line once, with one of these categories:

- `fallback-secret`: a secret read from the environment with a fallback value, so the app starts without it
  (`os.getenv`/`os.environ.get` with a default or an `or` fallback, `process.env.X ||`/`??`). A variable is
  a secret when its name contains `SECRET`, `KEY`, `TOKEN` or `PASSWORD`. Follow a fallback that is a constant or a
  helper defined in another module: one that yields a value is a finding, one that raises is not. Reading the
  variable so that a missing value crashes is fine.
- `hardcoded-credential`: a password, API key, token or secret written as a literal in code (a variable or key
  whose name contains `SECRET`, `KEY`, `TOKEN` or `PASSWORD`), in an env file, in the YAML settings or in a
  `Dockerfile` `ENV`.
- `weak-crypto`: MD5 or SHA-1 applied to a password, token or secret; ECB mode; a constant IV. MD5/SHA-1 of
  ordinary content (checksums, ETags) is fine.
- `permissive-default`: debug switched on, CORS origins or allowed hosts `*`, authentication off by default,
  world-writable permissions (`0777`).
- `weak-tls`: `ssl_protocols` enabling SSLv3, TLSv1 or TLSv1.1, or `ssl_ciphers` enabling RC4, DES/3DES, NULL,
  EXPORT or MD5 suites (a `!` entry disables a suite).

Severity: `critical` for `fallback-secret` and `hardcoded-credential`, except that a `fallback-secret` whose
variable `{PRODUCTION_ENV}` injects in production is `high`; `high` for `weak-crypto` and `weak-tls`;
`medium` for `permissive-default`. The values in `{PRODUCTION_ENV}` are secret-manager references, not
credentials.
{broken}
Write `/app/out/findings.json` as
`{{"findings": [{{"file": "<path relative to /app>", "line": <1-based line>, "category": "...", "severity": "..."}}],
"skipped": [<paths of files you could not audit>]}}`. Do not modify any file of the application.
"""
