"""Everything ingestion learns about one skill folder that does not need the rest of the corpus.

Pure and picklable so worker processes can run it; dedup and the final verdict happen in the
pipeline, which sees skills in a fixed order."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from skillgym_core.contracts.skill import Diagnostic, Evidence, SkillFile, SkillRecord
from skillgym_core.ids import content_id

from skillgym_ingest.annotate.basic import annotate_basic
from skillgym_ingest.annotate.quality import annotate_quality
from skillgym_ingest.annotate.runtime import RUNTIME_RULES, annotate_runtime
from skillgym_ingest.annotate.safety import SAFETY_RULESET, screen
from skillgym_ingest.content import SkillContent, build_content, normalized_hash, tree_hash
from skillgym_ingest.errors import IngestError
from skillgym_ingest.filters import rejection_reasons
from skillgym_ingest.loader import SkillFolder, load_folder
from skillgym_ingest.minhash import capped_shingles, signature_of, words_and_offsets
from skillgym_ingest.script_signature import fingerprint_of, strip_comments
from skillgym_ingest.settings import IngestSettings
from skillgym_ingest.spec import check_front_matter
from skillgym_ingest.taxonomy import KeywordClassifier, load_taxonomy

ALL_RULES = RUNTIME_RULES + SAFETY_RULESET


@dataclass
class Analysis:
    record: SkillRecord
    root: Path | None
    normalized_hash: str | None = None
    signature: np.ndarray | None = None  # of the text: SKILL.md, plus the scripts when they are small
    script_signature: np.ndarray | None = None  # of the code, when there is enough of it


def skill_id_for(content_hash: str) -> str:
    return content_id("skill", {"content_hash": content_hash})


def analyze_path(root: Path, source: str, settings: IngestSettings) -> Analysis:
    """Load and analyse one folder; a read failure becomes a rejected record, never an exception."""
    try:
        folder = load_folder(
            root, source, max_files=settings.max_walk_files, max_bytes=settings.max_skill_bytes,
            max_file_bytes=settings.max_file_bytes,
        )
    except IngestError as exc:
        return Analysis(error_record(source, root.name, exc), None)
    return analyze_folder(folder, settings)


def analyze_folder(folder: SkillFolder, settings: IngestSettings) -> Analysis:
    content = build_content(folder, settings.max_scan_bytes)
    front = content.parsed.front_matter
    diagnostics = list(content.parsed.diagnostics)
    if content.skill_md_path is None:
        diagnostics.append(Diagnostic(code="skill_md_missing", message="folder has no SKILL.md", severity="error"))
    elif content.skill_md_path != "SKILL.md":
        diagnostics.append(
            Diagnostic(code="skill_md_lowercase", message="file is named skill.md, not SKILL.md",
                       severity="warning", file=content.skill_md_path)
        )
    if content.skill_md_path is not None:
        diagnostics.extend(check_front_matter(front, folder.name, content.skill_md_path))
    for link in folder.links:
        diagnostics.append(
            Diagnostic(code="symlink_escapes" if link.escapes else "symlink_skipped",
                       message=f"symbolic link -> {link.target} was not followed",
                       severity="error" if link.escapes else "info", file=link.path)
        )
    if folder.truncated:
        diagnostics.append(
            Diagnostic(code="listing_truncated", message=f"stopped listing after {len(folder.files)} files",
                       severity="warning")
        )
    content_hash = tree_hash(folder.files)
    name = front.get("name")
    record = SkillRecord(
        skill_id=skill_id_for(content_hash),
        name=name if isinstance(name, str) and name else folder.name,
        description=content.description,
        source=folder.source,
        content_hash=content_hash,
        front_matter=front,
        body=content.body,
        files=[SkillFile(path=f.path, size=f.size, sha256=f.sha256) for f in folder.files],
        diagnostics=diagnostics,
        basic=annotate_basic(content),
    )
    annotate_record(record, content, settings)
    record.reasons = rejection_reasons(record, settings, has_skill_md=content.skill_md_path is not None)
    record.normalized_hash = normalized_hash(content)
    sig, script_sig = dedup_signatures(content, settings) if settings.dedup else (None, None)
    return Analysis(record, folder.root, record.normalized_hash, sig, script_sig)


def annotate_record(record: SkillRecord, content: SkillContent, settings: IngestSettings) -> None:
    """Runtime, quality, safety and taxonomy: the rule annotators."""
    hits = ALL_RULES.scan(content)
    record.runtime = annotate_runtime(content, hits)
    record.quality = annotate_quality(content)
    record.safety = screen(content, record.runtime, hits)
    classification = classifier_for(settings.taxonomy_path).classify(record.name, record.description, record.body)
    record.category = classification.category
    record.subcategory = classification.subcategory
    record.category_confidence = classification.confidence
    record.category_evidence = [
        Evidence(rule="taxonomy.keywords", excerpt=", ".join(classification.matched)[:200])
    ] if classification.matched else [Evidence(rule="taxonomy.no_keyword_matched")]


@functools.lru_cache(maxsize=4)
def classifier_for(taxonomy_path: Path | None) -> KeywordClassifier:
    return KeywordClassifier(load_taxonomy(taxonomy_path))


def dedup_signatures(content: SkillContent, settings: IngestSettings) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The text signature and the script signature of a skill (either may be None).

    The text is SKILL.md; scripts too small for a signature of their own count as part of it
    (comments removed), big ones are left out, so that a rewritten SKILL.md over the same
    program and a different program under a templated SKILL.md are each judged on what differs.
    SKILL.md and every script are hashed in one pass and the words split back per file."""
    scripts = content.scripts()
    head = f"{content.description}\n{content.body}\n"
    codes = [strip_comments(script.text, script.suffix) for script in scripts]
    tokens, offsets = words_and_offsets(head + "\n".join(codes))
    bounds = np.cumsum([len(head.encode("utf-8", "replace"))] + [len(code.encode("utf-8", "replace")) + 1 for code in codes])
    cuts = np.searchsorted(offsets, bounds).tolist()
    per_file = [(script.path, tokens[cuts[i] : cuts[i + 1]]) for i, script in enumerate(scripts)]
    script_sig = fingerprint_of(per_file, settings).signature
    text_tokens = tokens if script_sig is None else tokens[: cuts[0]]
    if text_tokens.size == 0:
        return None, script_sig
    return signature_of(capped_shingles(text_tokens, settings.shingle_size), settings.minhash_perms), script_sig


def error_record(source: str, name: str, exc: IngestError) -> SkillRecord:
    """A record for something that could not be read at all, keyed by where it came from."""
    return SkillRecord(
        skill_id=content_id("skill", {"source": source, "error": exc.reason}),
        name=name or "unknown",
        source=source,
        content_hash="",
        diagnostics=[Diagnostic(code=exc.reason, message=str(exc), severity="error")],
        reasons=[exc.reason],
    )
