"""business/accounting, financial-analysis, sales-crm: a month's general ledger reconciled with
its bank statements (tolerance windows, foreign currency, duplicate postings, a card statement
as a real workbook), expense claims checked against a policy, and the quarter's pipeline
forecast. Where the skill states the receipt threshold, category limits or stage weights, the
instance uses them and the instruction points at the skill."""

from __future__ import annotations

import datetime
import json
import random
import re
from decimal import Decimal
from typing import Any

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families.base import Fit, SkillClaim, family_text, load_family_spec
from skillgym_builder.families.common import agent_solution, requirements, rubric, skill_helpers, source, verifier_files
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.ledger_claims import (
    DEFAULT_LIMITS,
    DEFAULT_RECEIPT_THRESHOLD,
    DEFAULT_STAGES,
    claim_files,
    deal_file,
    make_claims,
    make_deals,
    pipeline_expected,
    quarter_of,
    violations,
)
from skillgym_builder.families.ledger_data import TOLERANCE, WINDOW, book_files, card_rows, make_books
from skillgym_builder.families.render import RenderJob
from skillgym_builder.families.skillfacts import Fact, body_lines
from skillgym_builder.skillcard import SkillCard, clean_inline
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "ledger-reconcile"
CARD_BOOK = "bank/card_statement.xlsx"
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_AMOUNT = r"\$\s?(\d[\d,]*(?:\.\d{1,2})?)"
RECEIPT_RULE = re.compile(r"\breceipts?\b.*?\b(?:over|above|exceeding|more than|greater than)\s+" + _AMOUNT, re.I)
LIMIT_HEADING = re.compile(r"\blimits?\b", re.I)
STAGE_HEADING = re.compile(r"\bstages?\b.*\b(?:probabilit|weight)|\b(?:probabilit|weight)\w*\b.*\bstages?\b", re.I)
_NAME = r"^\|?\s*([A-Za-z][A-Za-z &/]*[A-Za-z])\s*(?:\||:|\u2014|\u2013|-)\s*"
LIMIT_ROW = re.compile(_NAME + _AMOUNT)
STAGE_ROW = re.compile(_NAME + r"(\d{1,3}(?:\.\d+)?)\s*%")


def receipt_threshold(card: SkillCard) -> Fact | None:
    """The amount above which the skill requires a receipt ("receipts for expenses over $25")."""
    for number, raw in body_lines(card.skill_md):
        found = RECEIPT_RULE.search(clean_inline(raw))
        if found:
            return Fact(Decimal(found.group(1).replace(",", "")), number)
    return None


def _table(card: SkillCard, heading: re.Pattern[str], row: re.Pattern[str], low: Decimal, high: Decimal) -> Fact | None:
    lines = body_lines(card.skill_md)
    for position, (number, raw) in enumerate(lines):
        title = _HEADING.match(raw)
        if not title or not heading.search(clean_inline(title.group(2))):
            continue
        items: dict[str, Decimal] = {}
        for _, text in lines[position + 1 :]:
            if _HEADING.match(text):
                break
            found = row.match(clean_inline(text))
            if found and low < Decimal(found.group(2).replace(",", "")) < high:
                items[found.group(1).strip()] = Decimal(found.group(2).replace(",", ""))
        if len(items) >= 2:
            return Fact(items, number)
    return None


def category_limits(card: SkillCard) -> Fact | None:
    """Per-claim limits by expense category, from a section titled with "limits"."""
    return _table(card, LIMIT_HEADING, LIMIT_ROW, Decimal(0), Decimal("1e12"))


def stage_probabilities(card: SkillCard) -> Fact | None:
    """Win probabilities (percent) of the open pipeline stages; 0% and 100% stages are closed ones."""
    return _table(card, STAGE_HEADING, STAGE_ROW, Decimal(0), Decimal(100))


def _policy(card: SkillCard) -> tuple[dict[str, Any], dict[str, str]]:
    """The rules this instance uses (the skill's where it states them) and the facts taken from it."""
    facts = {"receipt_threshold": receipt_threshold(card), "category_limits": category_limits(card),
             "stage_probabilities": stage_probabilities(card)}
    defaults: dict[str, Any] = {"receipt_threshold": DEFAULT_RECEIPT_THRESHOLD, "category_limits": DEFAULT_LIMITS,
                                "stage_probabilities": DEFAULT_STAGES}
    rules = {name: fact.value if fact else defaults[name] for name, fact in facts.items()}
    return rules, {name: fact.source() for name, fact in facts.items() if fact is not None}


class LedgerReconcileFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        rules, facts = _policy(card)
        year, month = 2025, rng.randint(2, 11)
        books = make_books(rng, values, year, month)
        count = int(values["record_count"])
        start = datetime.date(year, month, 1)
        claims = make_claims(rng, 6 + count // 6, rules["category_limits"], rules["receipt_threshold"], start,
                             books.rates, bool(values["error_recovery"]))
        quarter = quarter_of(year, month)
        deals = make_deals(rng, 8 + count // 5, rules["stage_probabilities"], quarter, float(values["noise_level"]))
        workspace = {**book_files(books, split_columns=values["noise_level"] > 0), **claim_files(claims, rng),
                     "crm/pipeline.csv": deal_file(deals)}
        if values["distractor_files"]:
            prior = make_claims(rng, 5, rules["category_limits"], rules["receipt_threshold"],
                                start - datetime.timedelta(days=28), {}, False)
            workspace["expenses/archive/claims_prior_month.csv"] = claim_files(prior, rng)["expenses/claims.csv"]
        jobs = []
        if "Card" in books.accounts:
            jobs.append(RenderJob(script=family_text(FAMILY_ID, "render.py"),
                                  params={"file": CARD_BOOK, "rows": card_rows(books)},
                                  requirements=tuple(self.spec.dependencies.build_python), produces=(CARD_BOOK,)))
        found = books.expected()
        metrics = found.pop("metrics")
        assert isinstance(metrics, dict)
        policy = violations(claims, rules["category_limits"], rules["receipt_threshold"])
        flagged = {claim_id for claim_id, _ in policy}
        metrics.update({"claims_total": str(sum((c.usd for c in claims), Decimal(0))),
                        "approved_claims_total": str(sum((c.usd for c in claims if c.id not in flagged), Decimal(0))),
                        **pipeline_expected(deals, rules["stage_probabilities"], quarter)})
        expected = {"reconciliation": found, "violations": [list(v) for v in policy], "metrics": metrics}
        statements = ["bank/operating_statement.csv", *([CARD_BOOK] if jobs else [])]
        task = {"statements": statements, "fx": bool(books.rates), "quarter": [d.isoformat() for d in quarter],
                "tolerance": str(TOLERANCE), "window": WINDOW,
                "from_skill": sorted(facts), "rules": {k: _plain(v) for k, v in rules.items() if k not in facts}}
        argument = json.dumps(task)
        inspect = ["ls -R ledger bank expenses crm", "head -5 ledger/general_ledger.csv bank/operating_statement.csv"]
        helpers = skill_helpers(FAMILY_ID, "ledgerfacts.py")
        solve = agent_solution(card, inspect=inspect, helpers=helpers, script=source(FAMILY_ID, "solve_pandas.py"),
                               name="reconcile.py", run=f"python3 /tmp/work/reconcile.py '{argument}'")
        alternative = agent_solution(card, inspect=inspect[:1], helpers=helpers,
                                     script=source(FAMILY_ID, "solve_stdlib.py"), name="reconcile.py",
                                     run=f"python3 /tmp/work/reconcile.py '{argument}'")
        claim = SkillClaim(
            claimed=bool(facts), facts=facts,
            reason="the receipt threshold, category limits or stage weights the policy uses come from the skill"
            if facts else "the skill states no policy figures; the instruction gives them and the task needs the data work")
        items = rubric(self.spec, ["reconciliation", "policy", "metrics"])
        reqs, skipped = requirements(self.spec, card)
        protected = sorted(workspace) + [job.produces[0] for job in jobs]
        return TemplateOutput(
            instruction=_instruction(card, task, rules, facts, month, bool(values["distractor_files"])),
            workspace=workspace,
            protected=protected,
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"stdlib-decimal": alternative},
            blueprint=self.spec.blueprint,
            params={"entries": len(books.entries), "bank_lines": len(books.lines), "claims": len(claims),
                    "deals": len(deals), "accounts": len(books.accounts)},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items], "render_jobs": len(jobs)},
            render_jobs=jobs,
        )


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: str(v) for k, v in value.items()}
    return str(value)


def _rule_text(name: str, rules: dict[str, Any], facts: dict[str, str], skill: str) -> str:
    if name in facts:
        return f"as the `{skill}` skill in your skills directory sets it"
    value = rules[name]
    if name == "receipt_threshold":
        return f"${value}"
    unit = "$" if name == "category_limits" else ""
    return ", ".join(f"{k} {unit}{v}{'' if unit else '%'}" for k, v in value.items())


def _instruction(card: SkillCard, task: dict[str, Any], rules: dict[str, Any], facts: dict[str, str], month: int,
                 decoys: bool) -> str:
    period = datetime.date(2025, month, 1).strftime("%B %Y")
    first, last = task["quarter"]
    files = ["- `/app/ledger/general_ledger.csv`: the general ledger (signed amounts in each entry's currency)",
             "- `/app/bank/operating_statement.csv`: the `Operating` account's bank statement, in USD"]
    if CARD_BOOK in task["statements"]:
        files.append(f"- `/app/{CARD_BOOK}`: the `Card` account's statement (a workbook), in USD")
    if task["fx"]:
        files.append("- `/app/rates/fx_rates.csv`: daily exchange rates, USD per unit of each currency")
    files += ["- `/app/expenses/claims.csv` and `/app/expenses/receipts/`: expense claims and the receipts on file",
              "- `/app/crm/pipeline.csv`: the CRM pipeline export"]
    archive = "\nFiles under `archive/` folders belong to closed periods; leave them out.\n" if decoys else ""
    skill = card.name
    threshold = _rule_text("receipt_threshold", rules, facts, skill)
    limits = _rule_text("category_limits", rules, facts, skill)
    stages = _rule_text("stage_probabilities", rules, facts, skill)
    return f"""# Close the month: bank reconciliation, expense policy and pipeline

Finance is closing {period}. The inputs:

{chr(10).join(files)}
{archive}
Work in USD. An amount in another currency counts as the amount times that currency's rate on the
entry's (or claim's) date, rounded half up to the cent.

## Reconciliation

A bank line and a ledger entry of the same account match when the bank amount differs from the
entry's USD amount by at most ${task["tolerance"]} and their dates are at most {task["window"]} days apart;
each entry and each line matches at most once. A bank line with the same date, description and amount
as an earlier line of its statement is a duplicate posting: it matches nothing and is not unmatched.

Write `/app/out/reconciliation.json` as `{{"matched": [{{"ledger_id", "bank_id"}}], "unmatched_ledger":
[entry ids], "unmatched_bank": [bank line ids], "duplicate_bank": [bank line ids], "adjustments":
[{{"ledger_id", "bank_id", "difference"}}]}}`, where `adjustments` holds every matched pair whose amounts
differ and `difference` is the bank amount minus the entry's USD amount.

## Expense policy

Check every claim in `expenses/claims.csv` by its USD amount:

- `missing_receipt`: above the receipt threshold ({threshold}) with no receipt on file (the
  `receipt` field is empty or `expenses/receipts/<receipt>.txt` does not exist);
- `over_limit`: above its category's per-claim limit ({limits});
- `duplicate_claim`: same employee, date, category, amount and currency as a claim with a lower id.

Write `/app/out/policy.json` as `{{"violations": [{{"claim_id", "rule"}}]}}`, one entry per claim and
rule it breaks.

## Metrics

Write `/app/out/metrics.json` with these numbers:

- `matched_count`; `unmatched_ledger_total` and `unmatched_bank_total` (sums of the unmatched entries' USD
  amounts and of the unmatched bank lines); `adjustments_total` (sum of the differences);
- `claims_total` (every claim) and `approved_claims_total` (claims that break no rule), in USD;
- for the deals whose `close_date` falls in the quarter {first} to {last}: `weighted_pipeline`, the sum of
  amount times win probability over deals in open stages (probabilities: {stages}; stage names in the
  export may differ in case and spacing); `weighted_by_owner`, that sum per owner (owners with such
  deals only); `closed_won_total`, the sum of `Closed Won` amounts; `win_rate`, the count of `Closed Won`
  deals over the count of `Closed Won` and `Closed Lost` deals, to 4 decimals.

Money is to the cent: round half up, and round only the final sums (the weighted figures are accepted
within $0.01). Do not modify the input files.
"""
