"""documents/spreadsheets: expense-report workbooks made with openpyxl (rendered in the
sandbox) with planted header fields, a messy item table and decoys, extracted into JSON."""

from __future__ import annotations

import datetime
import json
import random
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.render import RenderJob
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "spreadsheet-extract"
HEADER = ["Date", "Category", "Description", "Amount", "Currency"]
CATEGORIES = {"TRN": "Transportation", "LDG": "Lodging", "MEA": "Meals", "OFS": "Office supplies", "OTH": "Other"}
DESCRIPTIONS = {
    "Transportation": ["Taxi from airport to hotel", "Train ticket to client site", "Parking at conference venue",
                       "Rental car fuel refill"],
    "Lodging": ["Hotel night at conference", "Extended stay for client workshop", "Hotel late checkout fee"],
    "Meals": ["Team lunch with client", "Dinner during site visit", "Breakfast at airport", "Coffee with vendor"],
    "Office supplies": ["Printer toner for field office", "Notebooks and pens", "USB-C adapter for projector"],
    "Other": ["Conference registration fee", "Visa processing fee", "Mobile data roaming pass"],
}
PEOPLE = ["Dana Whitfield", "Arjun Mehta", "Lucia Ferraro", "Kwame Boateng", "Ingrid Solberg", "Mei Takahashi"]
DEPARTMENTS = ["Field Operations", "Customer Success", "Research", "Sales Engineering", "Finance"]
ERRORS = ["#REF!", "#VALUE!", "#N/A", "#DIV/0!"]


def _money(rng: random.Random, value: float, noise: float) -> Any:
    if rng.random() >= noise:
        return value
    text = f"{abs(value):,.2f}"
    sign = "-" if value < 0 else ""
    return rng.choice([f"{sign}${text}", f"{sign}{text} USD", f"{sign}{text}"])


def workbook(rng: random.Random, name: str, knobs: dict[str, float], archived: bool) -> tuple[dict[str, Any], dict[str, Any]]:
    """(render parameters, expected extraction) of one workbook."""
    count, noise = int(knobs["record_count"]), float(knobs["noise_level"])
    start = datetime.date(2025, rng.randint(1, 11), 1)
    end = (start.replace(day=28) + datetime.timedelta(days=4)).replace(day=1) - datetime.timedelta(days=1)
    fields = {"employee": rng.choice(PEOPLE), "department": rng.choice(DEPARTMENTS), "period_start": start.isoformat(),
              "period_end": end.isoformat(), "report_id": f"EXP-{start.year}-{rng.randint(100, 9999):04d}"}
    value_column = "C" if noise and rng.random() < 0.5 else "B"
    labels = [{"label": label, "label_cell": f"A{3 + i}", "value_cell": f"{value_column}{3 + i}", "value": fields[key]}
              for i, (label, key) in enumerate([("Employee:", "employee"), ("Department:", "department"),
                                                ("Period start:", "period_start"), ("Period end:", "period_end"),
                                                ("Report ID:", "report_id")])]
    header_row = 10 if value_column == "C" else 9
    coded = bool(knobs["multi_step"])
    rows: list[list[Any]] = []
    items: list[dict[str, Any]] = []
    skipped: list[int] = []
    for _ in range(count):
        if noise and rng.random() < noise / 4:
            rows.append([None] * len(HEADER))
        code = rng.choice(sorted(CATEGORIES))
        category = CATEGORIES[code]
        day = start + datetime.timedelta(days=rng.randint(0, (end - start).days))
        amount = round(rng.uniform(4, 480), 2) * (-1 if rng.random() < 0.05 else 1)
        description = rng.choice(DESCRIPTIONS[category])
        row_number = header_row + 1 + len(rows)
        if knobs["error_recovery"] and rng.random() < 0.08:
            rows.append([{"date": day.isoformat()}, code if coded else category, description,
                         {"error": rng.choice(ERRORS)}, "USD"])
            skipped.append(row_number)
            continue
        rows.append([{"date": day.isoformat()}, code if coded else category, description, _money(rng, amount, noise), "USD"])
        items.append({"date": day.isoformat(), "category": category, "description": description, "amount": amount})
    if knobs["error_recovery"] and not skipped:
        rows.append([{"date": start.isoformat()}, "OTH" if coded else "Other", "Duplicate receipt (voided)",
                     {"error": "#REF!"}, "USD"])
        skipped.append(header_row + len(rows))
    last = header_row + len(rows)
    sheets: list[dict[str, Any]] = []
    if coded:
        sheets.append({"title": "Codes", "header": ["Code", "Category"], "rows": [[c, n] for c, n in sorted(CATEGORIES.items())]})
    if archived:
        old = [[{"date": f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"}, rng.choice(list(CATEGORIES.values())),
                "Archived line", round(rng.uniform(4, 300), 2), "USD"] for _ in range(6)]
        sheets.append({"title": "Archive 2024", "header": HEADER, "rows": old})
    totals: dict[str, float] = {}
    for item in items:
        totals[item["category"]] = round(totals.get(item["category"], 0.0) + item["amount"], 2)
    params = {"file": name, "labels": labels, "header": HEADER, "header_row": header_row, "rows": rows,
              "total_row": last + 1, "total_formula": f"=SUM(D{header_row + 1}:D{last})", "sheets": sheets}
    expected = {**fields, "items": items, "skipped_rows": skipped, "totals_by_category": totals,
                "total": round(sum(i["amount"] for i in items), 2)}
    return params, expected


class SpreadsheetExtractFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        books, expected = [], {}
        for index in range(int(values["long_horizon"])):
            name = f"reports/expenses_{index + 1}.xlsx" if index else "reports/expenses.xlsx"
            params, want = workbook(rng, name, values, archived=bool(values["distractor_files"]))
            books.append(params)
            expected[name] = want
        if values["distractor_files"]:
            params, _ = workbook(rng, "reports/previous/expenses_last_period.xlsx", values, archived=False)
            books.append(params)
        files = sorted(expected)
        job = RenderJob(script=family_text(FAMILY_ID, "render.py"), params={"books": books},
                        requirements=tuple(self.spec.dependencies.build_python), produces=tuple(b["file"] for b in books))
        items = rubric(self.spec, ["records", "totals"])
        argument = json.dumps(files)
        solve = agent_solution(card, inspect=["ls -R reports"], script=source(FAMILY_ID, "solve_openpyxl.py"),
                               name="extract.py", run=f"python3 /tmp/work/extract.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls reports"], script=source(FAMILY_ID, "solve_xml.py"),
                                     name="extract.py", run=f"python3 /tmp/work/extract.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        claim = SkillClaim(claimed=False, reason="the workbooks carry every value; the skill teaches the library")
        return TemplateOutput(
            instruction=_instruction(files, bool(values["distractor_files"])),
            workspace={},
            protected=[b["file"] for b in books],
            tests=verifier_files(self.spec, {"reports": expected}, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"workbook-xml": alternative},
            blueprint=self.spec.blueprint,
            params={"workbooks": len(files), "items": int(values["record_count"])},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items], "render_jobs": 1},
            render_jobs=[job],
        )


def _instruction(files: list[str], decoys: bool) -> str:
    listed = "\n".join(f"- `/app/{name}`" for name in files)
    previous = " Workbooks under `reports/previous/` are already processed; ignore them." if decoys else ""
    return f"""# Extract the expense reports

Finance needs the submitted expense reports as data. The workbooks:

{listed}
{previous}
Write `/app/out/expenses.json` as `{{"reports": {{"<path as listed, e.g. {files[0]}>": {{...}}}}}}` with, for each
workbook (its `Report` sheet):

- `employee`, `department`, `period_start`, `period_end`, `report_id`: the header fields, as text
  (dates as `YYYY-MM-DD`);
- `items`: every expense line of the table as `{{"date": "YYYY-MM-DD", "category", "description", "amount"}}`
  with `amount` a number and `category` the category's full name;
- `skipped_rows`: the worksheet row numbers of expense lines whose amount cannot be read (an error value);
- `totals_by_category` (category name to the sum of its amounts) and `total`, both to the cent.

Do not modify the workbooks.
"""
