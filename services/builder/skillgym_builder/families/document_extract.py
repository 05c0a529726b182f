"""documents/pdf-processing: business documents (invoices, account statements, delivery reports)
rendered as real PDFs with reportlab (and, harder, Word files with python-docx) whose fields,
multi-page tables, totals and metadata are planted; the agent extracts them into JSON and
converts the tables to CSV. Void and draft copies and a failed download sit among them."""

from __future__ import annotations

import json
import random
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_helpers, source, verifier_files
from skillgym_builder.families.document_assets import ISO, KINDS, Kind, date_convention, document
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.render import RenderJob
from skillgym_builder.families.usage import skill_libraries
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "document-extract"
FAILED_DOWNLOAD = (b"<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n"
                   b"<body><h1>Bad Gateway</h1><p>The document service did not answer in time.</p></body></html>\n")
NAMES = {"invoice": "invoices", "statement": "account statements", "delivery": "delivery reports"}


def document_formats(card: SkillCard) -> tuple[str, ...]:
    """The file formats this skill's tool handles, in the order an instance favours them: a Word
    skill (python-docx) gets Word files, a PDF skill PDFs, a skill about both gets both."""
    libraries = skill_libraries(card)
    word = "docx" in libraries
    pdf = bool(libraries & {"pdfplumber", "pypdf", "PyPDF2", "fitz", "pdfminer", "reportlab", "camelot", "tabula"})
    return ("docx", "pdf") if word and pdf else ("docx",) if word else ("pdf",)


def _format(formats: tuple[str, ...], mixed: bool, index: int) -> str:
    """Word skills get Word files even at the easiest level; others mix in Word files when ``mixed``."""
    if formats[0] == "docx":
        return formats[index % len(formats)]
    return "docx" if mixed and index % 2 else "pdf"


def _path(kind: Kind, rng: random.Random, taken: set[str], suffix: str) -> str:
    while True:
        stem = {"invoice": "INV", "statement": "statement", "delivery": "DR"}[kind.name]
        path = f"documents/{stem}-2025-{rng.randint(100, 9999):04d}.{suffix}"
        if path not in taken:
            taken.add(path)
            return path


class DocumentExtractFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        kind = KINDS[rng.choice(sorted(KINDS))]
        fact = date_convention(card)
        claimed = fact is not None and fact.value != ISO
        out_format = str(fact.value) if claimed and fact is not None else ISO
        rows, noise = int(values["record_count"]), float(values["noise_level"])
        mixed = bool(values["multi_step"])
        formats = document_formats(card)
        count = max(2, int(values["long_horizon"])) if mixed else int(values["long_horizon"])
        taken: set[str] = set()
        renders: list[dict[str, Any]] = []
        expected: dict[str, Any] = {}
        for index in range(count):
            path = _path(kind, rng, taken, _format(formats, mixed, index))
            params, want = document(kind, rng, path, rng.randint(rows * 4 // 5, rows), noise, out_format, None)
            renders.append(params)
            expected[path] = want
        skipped = []
        for index, stamp in enumerate(["VOID", "DRAFT"][: int(values["distractor_files"])]):
            path = _path(kind, rng, taken, _format(formats, mixed, index))
            params, _ = document(kind, rng, path, max(6, rows // 3), noise, out_format, stamp)
            renders.append(params)
            skipped.append(path)
        workspace: dict[str, bytes] = {}
        unreadable = []
        if values["error_recovery"]:
            path = _path(kind, rng, taken, "pdf")
            workspace[path] = FAILED_DOWNLOAD
            unreadable.append(path)
        job = RenderJob(script=family_text(FAMILY_ID, "render.py"), params={"documents": renders},
                        requirements=tuple(self.spec.dependencies.build_python),
                        produces=tuple(r["file"] for r in renders))
        items = rubric(self.spec, ["documents", "rows", "table_csv"])
        answer = {"documents": expected, "skipped": sorted(skipped), "unreadable": sorted(unreadable),
                  "fields": [key for _, key, _ in kind.fields], "columns": {c.key: c.kind for c in kind.columns},
                  "total_of": kind.total_of}
        schema = {"fields": [list(field) for field in kind.fields],
                  "columns": [[c.label, c.key, c.kind] for c in kind.columns], "total_label": kind.total_label,
                  "date_format": None if claimed else ISO}
        argument = json.dumps(schema)
        solve = agent_solution(card, inspect=["ls -la documents", "file documents/* 2>/dev/null || true"],
                               script=source(FAMILY_ID, "solve_pdfplumber.py"), name="extract.py",
                               helpers=skill_helpers(FAMILY_ID, "skillrules.py"),
                               run=f"python3 /tmp/work/extract.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls documents"], script=source(FAMILY_ID, "solve_pdfminer.py"),
                                     name="extract.py", helpers=skill_helpers(FAMILY_ID, "skillrules.py"),
                                     run=f"python3 /tmp/work/extract.py '{argument}'")
        reqs, skipped_deps = requirements(self.spec, card)
        claim = SkillClaim(
            claimed=claimed, facts={"date_format": fact.source()} if claimed and fact is not None else {},
            reason="the date format of the extracted data is the skill's output convention" if claimed else
            "the documents carry every value and the instruction fixes the formats; the skill teaches the library")
        return TemplateOutput(
            instruction=_instruction(card, kind, sorted(expected), claimed),
            workspace=workspace,
            protected=sorted([*workspace, *(r["file"] for r in renders)]),
            tests=verifier_files(self.spec, answer, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"pdfminer-layout": alternative},
            blueprint=self.spec.blueprint,
            params={"kind": kind.name, "documents": count, "rows": rows, "decoys": len(skipped),
                    "word_documents": sum(r["format"] == "docx" for r in renders)},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped_deps,
                      "rubric": [i.model_dump() for i in items], "render_jobs": 1},
            render_jobs=[job],
        )


def _schema_lines(kind: Kind) -> tuple[str, str]:
    fields = "\n".join(f"  - `{key}`: the value printed after \"{label}:\"" + (" (a date)" if k == "date" else "")
                       for label, key, k in kind.fields)
    kinds = {"code": "text", "text": "text", "int": "an integer", "money": "a number", "date": "a date"}
    columns = "\n".join(f"  - `{c.key}` ({kinds[c.kind]}): the \"{c.label}\" column" for c in kind.columns)
    return fields, columns


def _instruction(card: SkillCard, kind: Kind, files: list[str], claimed: bool) -> str:
    fields, columns = _schema_lines(kind)
    dates = (f"Write every date the way the `{card.name}` skill in your skills directory prescribes for extracted "
             "data." if claimed else "Write every date as `YYYY-MM-DD`.")
    header = ",".join(["document", *(c.key for c in kind.columns)])
    return f"""# Extract the {NAMES[kind.name]}

A batch of {NAMES[kind.name]} arrived in `/app/documents/` (PDF{" and Word" if any(f.endswith(".docx") for f in files) else ""} files).
Finance needs them as data.

Write `/app/out/documents.json` as
`{{"documents": {{"<path, e.g. documents/name.pdf>": {{...}}}}, "skipped": [...], "unreadable": [...]}}` where each
document holds:

- `title` and `author`: the document's metadata (PDF document information, Word core properties);
- `pages`: the page count of a PDF, `null` for a Word document;
- `fields`: an object with
{fields}
- `rows`: every row of the document's table, in document order (the table may run over several pages and
  repeat its header on each), as objects with
{columns}
- `total`: the printed "{kind.total_label}" as a number.

Amounts are plain numbers (no currency signs or thousands separators; a negative amount is below zero).
{dates}

Documents stamped VOID or DRAFT are not final: leave them out and list their paths, sorted, under `skipped`.
A file in the folder that is not a readable PDF or Word document goes, sorted, under `unreadable`.

Also convert the tables to `/app/out/rows.csv`: the header `{header}`, then one line per table row of
every extracted document (`document` is its path as above), with the same values as in the JSON.

Do not modify anything under `/app/documents/`.
"""
