"""The commit conventions a version-control skill prescribes, read from its SKILL.md: the fix
branch's name template, the commit header form (Conventional Commits, scope required or not),
a ticket footer, and a sign-off trailer. What the skill does not fix, the instance's
instruction states; the verifier receives both as regular expressions.

The reference solution reads the same facts with its own copy of these rules
(``data/families/git-forensics/conventions.py``); the tests check both agree."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard

PLACEHOLDERS = {"ticket": "ticket", "issue": "ticket", "id": "ticket", "ticket-id": "ticket", "issue-id": "ticket",
                "slug": "slug", "summary": "slug", "description": "slug", "short-description": "slug",
                "topic": "slug", "type": "type"}
BRANCH_TOKEN = re.compile(r"`([a-z][\w.-]*/(?:[\w.-]|<[\w-]+>)+)`")
HEADER_TOKEN = re.compile(r"`<type>(\(<scope>\))?!?: <[\w -]+>`")
CONVENTIONAL_NAME = re.compile(r"\bconventional commits?\b", re.I)
FOOTER_TOKEN = re.compile(r"`([A-Z][A-Za-z-]*): #?<(?:ticket|issue|id|ticket-id|issue-id)>`")
SIGNOFF = re.compile(r"signed-off-by|\bsign[- ]?offs?\b|\bDCO\b", re.I)
SLUG = r"[a-z0-9]+(?:-[a-z0-9]+)*"
SCOPE = r"\([a-z0-9][a-z0-9._/-]*\)"
DEFAULT_BRANCH = "fix/<ticket>-<slug>"


@dataclass(frozen=True)
class Conventions:
    branch: Fact | None = None  # the template, e.g. "fix/<ticket>-<slug>"
    header: Fact | None = None  # "scope" (scope required) or "plain"
    footer: Fact | None = None  # the footer key, e.g. "Refs"
    signoff: Fact | None = None  # True

    def facts(self) -> dict[str, str]:
        return {name: fact.source() for name, fact in self.__dict__.items() if fact is not None}


def _branch(line: str) -> str | None:
    if not re.search(r"\bbranch", line, re.I):
        return None
    for token in BRANCH_TOKEN.findall(line):
        names = re.findall(r"<([\w-]+)>", token)
        if names and all(n.lower() in PLACEHOLDERS for n in names) and any(
                PLACEHOLDERS[n.lower()] in ("ticket", "slug") for n in names):
            return str(token)
    return None


def read(card: SkillCard) -> Conventions:
    found: dict[str, Fact] = {}
    for number, line in body_lines(card.skill_md):
        branch = _branch(line)
        if branch and "branch" not in found:
            found["branch"] = Fact(branch, number)
        header = HEADER_TOKEN.search(line)
        if header and "header" not in found:
            found["header"] = Fact("scope" if header.group(1) else "plain", number)
        footer = FOOTER_TOKEN.search(line)
        if footer and "footer" not in found:
            found["footer"] = Fact(footer.group(1), number)
        if SIGNOFF.search(line) and "signoff" not in found:
            found["signoff"] = Fact(True, number)
    if "header" not in found:
        for number, line in body_lines(card.skill_md):
            if CONVENTIONAL_NAME.search(line):
                found["header"] = Fact("plain", number)
                break
    return Conventions(**found)


def branch_pattern(template: str, ticket: str) -> str:
    parts = re.split(r"(<[\w-]+>)", template)
    out = []
    for part in parts:
        name = part[1:-1].lower() if part.startswith("<") else None
        kind = PLACEHOLDERS.get(name) if name else None
        out.append({"ticket": f"(?i:{re.escape(ticket)})", "slug": SLUG, "type": "fix"}[kind] if kind
                   else re.escape(part))
    return "".join(out)


def rules(conventions: Conventions, ticket: str) -> dict[str, Any]:
    """What the verifier enforces: the skill's facts where it has them, the defaults otherwise."""
    template = str(conventions.branch.value) if conventions.branch else DEFAULT_BRANCH
    scope = bool(conventions.header and conventions.header.value == "scope")
    footer = f"{conventions.footer.value}: {ticket}" if conventions.footer else None
    return {"branch_template": template, "branch_regex": branch_pattern(template, ticket),
            "header_regex": f"fix{SCOPE}: \\S.*" if scope else f"fix(?:{SCOPE})?: \\S.*",
            "scope_required": scope, "footer": footer, "signoff": conventions.signoff is not None}


def naive_guess_passes(rule: dict[str, Any], slug: str) -> bool:
    """Whether an agent that never read the skill (branch ``fix/<slug>``, header ``fix: ...``, no
    trailers) would meet these rules: if it would, the skill is not needed for them."""
    return bool(re.fullmatch(rule["branch_regex"], f"fix/{slug}") and not rule["scope_required"]
                and not rule["footer"] and not rule["signoff"])
