"""Basic attributes: package completeness, language, file count, folder size."""

from __future__ import annotations

import re
from collections import Counter

from skillgym_core.contracts.skill import Annotation, Evidence

from skillgym_ingest.annotate.rules import anchored_finditer
from skillgym_ingest.content import SCRIPT_LANGUAGES, SkillContent
from skillgym_ingest.language import english_from_words

# Relative file references in Markdown: links, and code spans naming files in the usual folders.
_REFERENCE = re.compile(
    r"(?:\]\(|`)((?:\./)?(?:scripts|references|assets|templates|examples|reference|docs|resources|src)/"
    r"[\w./-]+?)[`)#]"
)
_REFERENCE_ANCHORS = ("](", "`")


def annotate_basic(content: SkillContent) -> dict[str, Annotation]:
    md = content.skill_md_path or "SKILL.md"
    front = content.parsed.front_matter
    present = {f.path for f in content.folder.files}
    missing_refs: list[Evidence] = []
    body = content.body
    # A reference never spans lines, so one pass over the body finds what a pass per line would.
    for match in anchored_finditer(_REFERENCE, body, body, _REFERENCE_ANCHORS):
        ref = match.group(1).removeprefix("./").rstrip(".")
        if ref not in present and not any(p.startswith(ref.rstrip("/") + "/") for p in present):
            line_no = content.parsed.body_line + body.count("\n", 0, match.start())
            missing_refs.append(Evidence(rule="basic.reference_missing", file=md, line=line_no, excerpt=ref))
    checks = {
        "skill_md": content.skill_md_path is not None,
        "front_matter": content.parsed.has_front_matter,
        "name": isinstance(front.get("name"), str) and bool(front.get("name")),
        "description": bool(content.description.strip()),
        "body": bool(content.body.strip()),
        "references_resolve": not missing_refs,
    }
    completeness = Annotation(
        value={"complete": all(checks.values()), "checks": checks, "missing_references": len(missing_refs)},
        evidence=[Evidence(rule=f"basic.completeness.{k}", file=md) for k, ok in checks.items() if not ok]
        + missing_refs[:20],
    )
    guess = english_from_words(content.language_words)
    language = Annotation(
        value={"language": guess.language, "score": guess.score, "words": guess.words},
        evidence=[Evidence(rule="basic.language.function_words", file=md)],
    )
    script_langs = Counter(
        SCRIPT_LANGUAGES[f.suffix] for f in content.text_files if f.suffix in SCRIPT_LANGUAGES
    )
    folder = content.folder
    return {
        "package_completeness": completeness,
        "language": language,
        "script_languages": Annotation(
            value=dict(sorted(script_langs.items())),
            evidence=[Evidence(rule="basic.script_languages.suffix")],
        ),
        "file_count": Annotation(
            value=folder.file_count(),
            evidence=[Evidence(rule="basic.file_count.walk" + (".truncated" if folder.truncated else ""))],
        ),
        "folder_size": Annotation(value=folder.total_bytes, evidence=[Evidence(rule="basic.folder_size.sum")]),
    }
