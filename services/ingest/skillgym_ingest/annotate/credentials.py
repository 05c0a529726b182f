"""Credentials need: a secret the user must supply for the skill to work.

Signals: SKILL.md saying so ("needs a Hugging Face access token", "needs an OPENAI_API_KEY"),
login commands (``gh auth login``, an OAuth login), and API-key variables that a script reads
or that the instructions export. Keys the skill only discusses (a secrets audit, a reference
page) do not count, nor do optional ones ("if you have an NCBI API key ...")."""

from __future__ import annotations

import re

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.qualifiers import Outline, Stance, distinct, gap, in_table_row, stance
from skillgym_ingest.annotate.rules import Hit, rule
from skillgym_ingest.content import SCRIPT_LANGUAGES, suffix_of

_SECRET_NOUN = (
    r"(?:api[ _-]?keys?|api[ _-]?tokens?|access[ _-]?tokens?|auth(?:entication)?[ _-]?tokens?|bot[ _-]?tokens?|"
    r"personal access tokens?|secret[ _-]?keys?|client secrets?|service[ _-]account(?: keys?| credentials)?|"
    r"oauth (?:tokens?|credentials|client)|credentials? files?|app passwords?)"
)
_KEY_NAME = r"\b[A-Z][A-Z0-9_]*(?:API_KEY|_TOKEN|_SECRET|SECRET_KEY|ACCESS_KEY|API_TOKEN)\b"
CREDENTIAL_RULES = [
    rule("runtime.credentials.stated",
         r"\b(?:requires?|needs?|must (?:have|provide|set)|set(?:ting)? up|set|export|provide|configure|add|create|"
         r"generate|obtain|paste|supply|enter)\b" + gap(60) + r"\b" + _SECRET_NOUN + r"\b",
         ["api key", "api_key", "api-key", "apikey", "api token", "api_token", "api-token", "token", "secret",
          "service account", "service-account", "oauth", "credential", "password"], "skill_md"),
    rule("runtime.credentials.named", _KEY_NAME,
         ["api_key", "_token", "_secret", "secret_key", "access_key"], "skill_md", 0),
    rule("runtime.credentials.login",
         r"\b(?:gh auth login|gcloud auth(?: application-default)? login|az login|aws configure|aws sso login|"
         r"huggingface-cli login|hf auth login|docker login|npm login|wandb login|vercel login|netlify login|"
         r"firebase login|heroku login|(?:mcp|codex|claude) (?:mcp )?login)\b|"
         r"\b(?:log in|login|sign in|authenticate)\b[^.\n]{0,40}\bOAuth\b|\bOAuth\b[^.\n]{0,30}\b(?:log ?in|sign[ -]in)\b",
         ["login", "log in", "sign in", "authenticate", "aws configure", "oauth"], "instructions", human_docs=False),
]
# A bare variable name counts when the words before it ask for it ("needs an OPENAI_API_KEY").
_ASKS_FOR = re.compile(r"\b(?:requires?|needs?|set|export|provide|configure|add|with|define|supply|store)\b",
                       re.IGNORECASE)
_ENV_KEY = re.compile(r"API_KEY|TOKEN|ACCESS_KEY")


def _asks_for(hit: Hit) -> bool:
    before = hit.excerpt[: min(hit.column, len(hit.excerpt))]
    return bool(_ASKS_FOR.search(" ".join(before.split()[-4:])))


def is_instruction_file(path: str, skill_md: str | None) -> bool:
    """SKILL.md and scripts: what the skill does, as opposed to reference pages and examples."""
    return path == skill_md or suffix_of(path) in SCRIPT_LANGUAGES


def key_variable_hits(env_hits: list[Hit], shape: Outline) -> list[Hit]:
    """API-key variables a script reads or the instructions export, stated plainly."""
    chosen = []
    for hit in env_hits:
        in_code = hit.rule in {"runtime.env.python", "runtime.env.js"} and suffix_of(hit.file) in SCRIPT_LANGUAGES
        exported = hit.excerpt.lstrip().startswith("export ") and is_instruction_file(hit.file, shape.path)
        if (in_code or exported) and _ENV_KEY.search(hit.excerpt) and stance(hit, shape) is Stance.STATED:
            chosen.append(hit)
    return chosen


def qualified(hits: list[Hit], key_hits: list[Hit], shape: Outline) -> tuple[list[Hit], list[tuple[Hit, Stance]]]:
    """The credential hits that state a need, and the others with how they are worded.
    ``hits`` are the ``runtime.credentials.*`` hits, ``key_hits`` from :func:`key_variable_hits`."""
    counted: list[Hit] = []
    discounted: list[tuple[Hit, Stance]] = []
    for hit in hits:
        if hit.rule == "runtime.credentials.named" and not _asks_for(hit):
            continue
        if hit.rule == "runtime.credentials.login" and in_table_row(hit):
            continue  # the login modes an app supports, listed: not a step that logs in
        worded = stance(hit, shape)
        if worded is Stance.STATED:
            counted.append(hit)
        else:
            discounted.append((hit, worded))
    return counted + key_hits, discounted


def credentials_annotation(counted: list[Hit], discounted: list[tuple[Hit, Stance]]) -> Annotation:
    names = sorted({m.group(0) for h in counted for m in re.finditer(_KEY_NAME, h.excerpt)})
    value = {"required": bool(counted), "optional": not counted and bool(discounted), "names": names}
    evidence = [h.evidence() for h in counted]
    evidence += [Evidence(rule=f"{h.rule}:{s.value}", file=h.file, line=h.line, excerpt=h.excerpt) for h, s in discounted]
    return Annotation(value=value, evidence=distinct(evidence) or [Evidence(rule="runtime.credentials.none_found")])
