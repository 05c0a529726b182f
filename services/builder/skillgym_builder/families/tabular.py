"""data-science: profile generated datasets (CSV / SQLite / Parquet) with planted duplicates,
gaps, outliers and malformed lines into a JSON summary, plus the skill's report when the skill
prescribes its sections."""

from __future__ import annotations

import hashlib
import json
import random

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import skillfacts
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
from skillgym_builder.families.tabular_data import (
    FORMATS,
    MISSING_MARKERS,
    THEMES,
    Dataset,
    encode,
    generate,
    lookup_csv,
    measurements,
    parquet_available,
    profile,
)
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "tabular-profile"
TOLERANCE = 1e-5
DECOY_NOTES = "Exports in archive/ are superseded snapshots kept for audit; do not use them for current figures.\n"


class TabularProfileFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        theme = rng.choice(sorted(THEMES))
        formats = [f for f in FORMATS if f != "parquet" or parquet_available()]
        columns = measurements(rng, theme)
        datasets: list[Dataset] = []
        for index in range(int(values["long_horizon"])):
            fmt = "csv" if index == 0 and values["error_recovery"] else rng.choice(formats)
            datasets.append(generate(rng, theme, index, values, fmt, columns))
        workspace: dict[str, bytes] = {}
        for dataset in datasets:
            workspace[dataset.path] = encode(dataset, rng, float(values["noise_level"]))
            if dataset.lookup is not None:
                workspace[_lookup_path(dataset)] = lookup_csv(dataset, THEMES[theme]["group"])
        protected = sorted(workspace)
        workspace.update(_decoys(rng, theme, datasets, columns, int(values["distractor_files"])))

        sections = skillfacts.report_sections(card)
        claim = SkillClaim(claimed=sections is not None,
                           reason="the report's sections are prescribed only by the skill" if sections else
                           "the skill prescribes no report structure; the profile alone is checked",
                           facts={"report_sections": sections.source()} if sections else {})
        expected = {
            "tolerance": TOLERANCE,
            "datasets": {d.path: profile(d) for d in datasets},
            "report": _report_spec(card, sections.value, datasets) if sections else None,
        }
        items = rubric(self.spec, ["schema", "counts", "statistics", "outliers", "groups"] + (["report"] if sections else []))
        task = {
            "markers": MISSING_MARKERS,
            "report": sections is not None,
            "datasets": [{"path": d.path, "fmt": d.fmt, "table": d.table, "group": d.group, "target": d.target,
                          "lookup": {"path": _lookup_path(d)} if d.lookup else None} for d in datasets],
        }
        inspect = ["ls -R data", *(f"head -n 5 {d.path}" for d in datasets if d.fmt == "csv")]
        argument = json.dumps(task).replace("'", "'\\''")
        solve = agent_solution(card, inspect=inspect, helpers=skill_reader(), script=source(FAMILY_ID, "solve_pandas.py"),
                               run=f"python3 /tmp/work/solve.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls data"], helpers=skill_reader(), script=source(FAMILY_ID, "solve_stdlib.py"),
                                     run=f"python3 /tmp/work/solve.py '{argument}'")
        reqs, skipped = requirements(self.spec, card, ["pyarrow>=14"] if any(d.fmt == "parquet" for d in datasets) else [])
        return TemplateOutput(
            instruction=_instruction(card, datasets, theme, sections is not None),
            workspace=workspace,
            protected=protected,
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"standard-library": alternative},
            blueprint=self.spec.blueprint,
            params={"theme": theme, "datasets": len(datasets), "formats": [d.fmt for d in datasets],
                    "records": int(values["record_count"])},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()
                          if sections or k != "out/report.md"},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _lookup_path(dataset: Dataset) -> str:
    stem = dataset.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return f"data/{stem}_{dataset.group.removesuffix('_code')}s.csv"


def _decoys(
    rng: random.Random, theme: str, datasets: list[Dataset], columns: list[tuple[str, float, float]], count: int
) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    if count:
        files["data/NOTES.txt"] = DECOY_NOTES.encode()
    for index in range(max(0, count - 1)):
        stale = generate(rng, theme, 10 + index, {"record_count": 40, "noise_level": 0.0, "multi_step": 0,
                                                  "error_recovery": 0}, "csv", columns)
        files[f"data/archive/{datasets[0].path.rsplit('/', 1)[-1].rsplit('.', 1)[0]}_{2019 + index}.csv"] = encode(stale, rng, 0.0)
    return files


def _report_spec(card: SkillCard, sections: object, datasets: list[Dataset]) -> dict[str, object]:
    shipped = [p for p in card.root.rglob("*.md") if p.is_file()]
    return {
        "sections": list(sections) if isinstance(sections, list) else [],
        "copy_hashes": sorted({hashlib.sha256(p.read_bytes().strip()).hexdigest() for p in shipped}),
        "mentions": [[d.path.rsplit("/", 1)[-1], len(d.rows)] for d in datasets],
    }


def _describe(dataset: Dataset) -> str:
    kind = {"sqlite": f"SQLite database, table `{dataset.table}`", "parquet": "Parquet file"}.get(
        dataset.fmt, "CSV with a header row")
    lookup = (f"; its {dataset.group.removesuffix('_code')} codes are resolved in `/app/{_lookup_path(dataset)}`"
              if dataset.lookup else "")
    return f"- `/app/{dataset.path}`: {kind}{lookup}"


def _instruction(card: SkillCard, datasets: list[Dataset], theme: str, report: bool) -> str:
    first = datasets[0]
    grouping = (
        f"records name their {first.group.removesuffix('_code')} by code (`{first.group}`); group by the `region` "
        "its lookup file gives that code."
        if first.lookup else f"group by `{first.group}`."
    )
    malformed = (
        "- Some lines are not valid records (a repeated header line, or the wrong number of fields). Leave them out "
        "and count them in `rejected_rows`; `rows` counts the valid records.\n"
        if any(d.bad_lines for d in datasets) else "- `rejected_rows` is 0 when every line is a valid record.\n"
    )
    report_text = (
        f"\nAlso write `/app/out/report.md`: the analysis report with the sections the `{card.name}` skill in your "
        "skills directory prescribes: its section titles as Markdown headings, every section covering each dataset "
        "by file name, and each dataset's row count given.\n"
        if report else ""
    )
    files = "\n".join(_describe(d) for d in datasets)
    return f"""# Profile the {theme.replace('-', ' ')} data

Before anyone analyses these {THEMES[theme]['unit']}, the data team needs a profile of each dataset:

{files}

Write `/app/out/profile.json` as
`{{"datasets": {{"<path as listed, e.g. {first.path}>": {{"rows", "duplicate_rows", "rejected_rows", "columns", "groups"}}}}}}`:

- `columns`: one entry per numeric measurement column (every column except `record_id`, `recorded_on` and the
  grouping column) with `missing`, `mean`, `median`, `std` (sample standard deviation), `min`, `max` and
  `outliers` (the `record_id`s of values outside Tukey's fences, 1.5 IQR beyond the quartiles).
- `groups`: {grouping} For each group, `rows` and `mean_{first.target}` (the mean of `{first.target}`).
{malformed}- A record that repeats an earlier one (same values in every field) counts in `duplicate_rows` and is dropped
  before computing `columns` and `groups`. Missing values are empty cells or `NA`, `N/A`, `null`, `-`; text
  values may carry stray spaces.
- Statistics use every non-missing value, outliers included. Give numbers unrounded (or to at least seven
  significant digits).
{report_text}
Do not change anything under `/app/data`.
"""
