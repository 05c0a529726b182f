"""The sources of one team update: a tracker export (CSV), a metrics export (JSON) and meeting
notes, with planted facts (work finished in the period, work due next week, blockers and their
owners, current metric values) and decoys (another team's rows, work finished before the period,
superseded readings, later work); harder levels add corrections in the notes, decoy files and a
colleague's draft with planted errors."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import random
from dataclasses import dataclass, field
from typing import Any

TEAMS = ["Payments Platform", "Search Relevance", "Mobile Checkout", "Data Ingestion", "Identity Services",
         "Partner Integrations"]
PEOPLE = ["Priya Raman", "Kai Moreau", "Lena Fischer", "Tomas Okafor", "Ines Duarte", "Ravi Menon", "Noor Haddad",
          "Jonas Berg", "Emeka Obi", "Sofia Russo", "Daniel Cho", "Mira Kovac", "Hugo Laine", "Anya Petrova"]
TITLES = [
    "Migrate refund webhooks", "Retry queue for failed payouts", "Audit log export", "Card vault key rotation",
    "Settlement lag dashboard", "Retire legacy tax service", "Rate limiter for partner API", "Idempotent charge API",
    "Alerting on payout delays", "Ledger reconciliation job", "Partner onboarding sandbox", "Currency rounding fix",
    "Dispute evidence upload", "Billing schema cleanup", "Checkout load test", "On-call runbook refresh",
    "Fraud rule backtesting", "Invoice layout redesign", "Merchant category backfill", "Token service health checks",
    "Search synonym editor", "Query latency tracing", "Offline sync for carts", "Apple Pay button refresh",
    "Consent banner rollout", "Session timeout tuning", "Export scheduler rewrite", "Warehouse cost report",
    "Login throttling", "Password reset emails", "Feature flag cleanup", "Error budget policy",
    "Webhook signature checks", "Address autocomplete", "Receipt email templates", "Staging data refresh",
]
BLOCKERS = ["waiting on vendor sandbox keys", "needs a security review slot", "pending legal sign-off on data terms",
            "blocked by the shared cluster upgrade", "waiting on design for the error states",
            "needs a schema change owned by the data team", "waiting on the partner's firewall change"]
METRICS = [("p95 checkout latency", "ms", 140, 390, 0), ("payment error rate", "%", 0.11, 0.97, 2),
           ("weekly active merchants", "", 4100, 9800, 0), ("payout success rate", "%", 97.1, 99.89, 2),
           ("median search latency", "ms", 410, 980, 0), ("support tickets opened", "", 120, 380, 0)]
STATUS_WORDS = {"done": ["Done", "done", "DONE ", "Closed", "Resolved"], "open": ["In Progress", "in-progress", "WIP"],
                "todo": ["To Do", "todo", "Open"], "blocked": ["Blocked", "BLOCKED", " blocked"]}
FIELDS = ["key", "title", "team", "owner", "status", "due", "completed", "blocker"]


@dataclass
class Item:
    key: str
    title: str
    team: str
    owner: str
    status: str  # done | open | todo | blocked
    due: dt.date
    completed: dt.date | None = None
    blocker: str = ""


@dataclass
class Sources:
    """The generated files and what a correct update must and must not say."""

    files: dict[str, bytes] = field(default_factory=dict)
    done: list[Item] = field(default_factory=list)
    plans: list[tuple[Item, dt.date]] = field(default_factory=list)
    blocked: list[Item] = field(default_factory=list)
    metrics: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value text, unit)
    absent: list[dict[str, str]] = field(default_factory=list)
    absent_in: list[dict[str, str]] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)  # source files pasting from which is copying


def _value(rng: random.Random, low: float, high: float, decimals: int, taken: set[str]) -> str:
    while True:
        text = f"{rng.uniform(low, high):.{decimals}f}"
        if text not in taken and not (decimals and text.endswith("0")):
            taken.add(text)
            return text


def with_unit(value: str, unit: str) -> str:
    return f"{value}{unit}" if unit in ("", "%") else f"{value} {unit}"


def _corrected(wrong: str, taken: set[str]) -> str:
    """A plausible corrected reading near ``wrong``, with as many decimals, distinct from ``taken``."""
    decimals = len(wrong.partition(".")[2])
    for factor in (0.93, 0.91, 0.95, 0.89, 1.06, 1.08, 0.8, 1.2):
        text = f"{float(wrong) * factor:.{decimals}f}"
        if text not in taken and text != wrong and not (decimals and text.endswith("0")):
            return text
    raise ValueError(f"no corrected value near {wrong}")


def _date(day: dt.date, noise: float, rng: random.Random) -> str:
    if rng.random() >= noise:
        return day.isoformat()
    return rng.choice([day.strftime("%b %d, %Y").replace(" 0", " "), day.strftime("%Y/%m/%d")])


class Generator:
    def __init__(self, rng: random.Random, knobs: dict[str, float]) -> None:
        self.rng, self.knobs = rng, knobs
        self.noise = float(knobs["noise_level"])
        self.start = dt.date(2025, 1, 6) + dt.timedelta(weeks=rng.randint(0, 45))
        self.end = self.start + dt.timedelta(days=4)
        self.next_days = [self.start + dt.timedelta(days=7 + d) for d in range(5)]
        self.team, self.other = rng.sample(TEAMS, 2)
        people = rng.sample(PEOPLE, 10)
        self.members, self.others = people[:5], people[5:]
        self.titles = rng.sample(TITLES, len(TITLES))
        self.keys = [f"PLAT-{k}" for k in rng.sample(range(100, 1000), 60)]
        self.out = Sources()

    def item(self, kind: str, team: str) -> Item:
        rng = self.rng
        owner = rng.choice(self.members if team == self.team else self.others)
        key, title = self.keys.pop(), self.titles.pop()
        if kind == "done":
            day = self.start + dt.timedelta(days=rng.randint(0, 4))
            return Item(key, title, team, owner, "done", day, day)
        if kind == "stale":
            day = self.start - dt.timedelta(days=rng.randint(3, 7))
            return Item(key, title, team, owner, "done", day, day)
        if kind == "plan":
            return Item(key, title, team, owner, rng.choice(["open", "todo"]), rng.choice(self.next_days))
        if kind == "later":
            return Item(key, title, team, owner, "todo", self.start + dt.timedelta(days=rng.randint(16, 40)))
        return Item(key, title, team, owner, "blocked", rng.choice(self.next_days), blocker=rng.choice(BLOCKERS))

    def tracker(self) -> list[Item]:
        count = int(self.knobs["record_count"])
        own_kinds = ["done", "done", "stale", "plan", "plan", "later", "blocked", "blocked"]
        extra = max(0, round((count - 10) * 0.6))
        own_kinds += self.rng.choices(["done", "plan", "blocked", "stale", "later"], [4, 3, 2, 1, 1], k=extra)
        other_kinds = self.rng.choices(["done", "plan", "blocked", "stale"], k=max(2, count - len(own_kinds)))
        rows = [self.item(k, self.team) for k in own_kinds] + [self.item(k, self.other) for k in other_kinds]
        self.rng.shuffle(rows)
        return rows

    def csv_bytes(self, rows: list[Item]) -> bytes:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(FIELDS)
        for item in rows:
            noisy = self.rng.random() < self.noise
            status = self.rng.choice(STATUS_WORDS[item.status]) if noisy else STATUS_WORDS[item.status][0]
            team = self.rng.choice([item.team.lower(), f" {item.team}", item.team.upper()]) if noisy else item.team
            writer.writerow([item.key, item.title, team, item.owner, status, _date(item.due, self.noise, self.rng),
                             _date(item.completed, self.noise, self.rng) if item.completed else "", item.blocker])
        return buffer.getvalue().encode()

    def metric_readings(self) -> tuple[list[dict[str, Any]], list[tuple[str, str, str, str]]]:
        """(JSON readings, [(name, final value, unit, superseded value)] of the team's metrics)."""
        taken: set[str] = set()
        chosen = self.rng.sample(METRICS, 3 + (self.knobs["record_count"] > 20))
        readings, own = [], []
        for index, (name, unit, low, high, decimals) in enumerate(chosen):
            final, old = _value(self.rng, low, high, decimals, taken), _value(self.rng, low, high, decimals, taken)
            if index == len(chosen) - 1:
                readings.append({"team": self.other, "metric": name, "value": float(final) if decimals else int(final),
                                 "unit": unit, "recorded": self.end.isoformat(), "status": "final"})
                self.out.absent.append({"what": "number", "value": final})
                continue
            day = self.end - dt.timedelta(days=1)
            for value, status, when in ((old, "superseded", day - dt.timedelta(days=2)), (final, "final", day)):
                readings.append({"team": self.team, "metric": name, "value": float(value) if decimals else int(value),
                                 "unit": unit, "recorded": when.isoformat(), "status": status})
            self.out.absent.append({"what": "number", "value": old})
            own.append((name, final, unit, old))
        self.rng.shuffle(readings)
        return readings, own

    def notes(self, rows: list[Item], corrections: list[str]) -> bytes:
        sync = self.start + dt.timedelta(days=3)
        own = [r for r in rows if r.team == self.team]
        lines = [f"# {self.team} weekly sync, {sync.isoformat()}", "", "Attendees: " + ", ".join(self.members), "",
                 "## Updates", ""]
        for item in own:
            if item.status == "done" and item.completed and item.completed >= self.start:
                lines.append(f"- {item.key} ({item.title}) went out on {item.completed.strftime('%A')}.")
            elif item.status == "blocked" and not any(item.key in line for line in corrections):
                lines.append(f"- {item.key} is still stuck: {item.blocker}.")
        if corrections:
            lines += ["", "## Decisions and corrections", "", *corrections]
        return ("\n".join(lines) + "\n").encode()

    def build(self, banned: list[str]) -> Sources:
        out, rng = self.out, self.rng
        rows = self.tracker()
        readings, own_metrics = self.metric_readings()
        done = [r for r in rows if r.team == self.team and r.status == "done" and r.completed and r.completed >= self.start]
        plans = [(r, r.due) for r in rows if r.team == self.team and r.status in ("open", "todo") and r.due <= self.next_days[-1]]
        blocked = [r for r in rows if r.team == self.team and r.status == "blocked"]
        metrics = [(name, final, unit) for name, final, unit, _ in own_metrics]
        out.absent += [{"what": "key", "value": r.key} for r in rows if r not in done and r.team != self.team]
        out.absent += [{"what": "key", "value": r.key} for r in rows if r.team == self.team and r.status != "blocked"
                       and r not in done and r not in [p for p, _ in plans]]
        corrections: list[str] = []
        if self.knobs["multi_step"]:
            moved = self.item("plan", self.team)
            old = self.start + dt.timedelta(days=14 + rng.randint(0, 4))
            new = rng.choice(self.next_days)
            rows.append(Item(moved.key, moved.title, moved.team, moved.owner, moved.status, old))
            plans.append((moved, new))
            freed = blocked.pop(rng.randrange(len(blocked)))
            finish = rng.choice(self.next_days)
            plans.append((freed, finish))
            name, wrong, unit, _ = own_metrics[0]
            fixed = _corrected(wrong, {m[1] for m in own_metrics} | {m[3] for m in own_metrics})
            metrics[0] = (name, fixed, unit)
            out.absent += [{"what": "date", "value": old.isoformat()}, {"what": "number", "value": wrong}]
            out.absent_in.append({"kind": "problems", "what": "key", "value": freed.key})
            corrections = [
                f"- {moved.key}: new target date {new.isoformat()} (the tracker still says {old.isoformat()}).",
                f"- {freed.key}: unblocked, the blocker is cleared; {freed.owner} expects to finish by {finish.isoformat()}.",
                f"- Correction: the {name} figure in the dashboard export double-counted retries; the corrected value "
                f"is {with_unit(fixed, unit)}.",
            ]
        rng.shuffle(rows)
        out.files["sources/tracker.csv"] = self.csv_bytes(rows)
        out.files["sources/metrics.json"] = (json.dumps({"exported": self.end.isoformat(), "readings": readings},
                                                        indent=2) + "\n").encode()
        out.files["sources/meeting-notes.md"] = self.notes(rows, corrections)
        out.done, out.plans, out.blocked, out.metrics = done, plans, blocked, metrics
        if self.knobs["distractor_files"]:
            self.decoy_files(rows, own_metrics)
        if self.knobs["error_recovery"]:
            self.draft(rows, own_metrics, banned)
        out.prose = [p for p in out.files if p.endswith(".md") and not p.startswith("drafts/")]
        return out

    def decoy_files(self, rows: list[Item], own_metrics: list[tuple[str, str, str, str]]) -> None:
        before = self.start - dt.timedelta(days=7)
        stale = [r for r in rows if r.team == self.team and r.completed and r.completed < self.start]
        lines = [f"# {self.team} update, {before.isoformat()} to {(before + dt.timedelta(days=4)).isoformat()}", "",
                 "Shipped " + ", ".join(f"{r.key} ({r.title})" for r in stale) + ".",
                 "Numbers: " + ", ".join(f"{n} {with_unit(old, u)}" for n, _, u, old in own_metrics) + "."]
        self.out.files[f"sources/archive/update-{before.isoformat()}.md"] = ("\n".join(lines) + "\n").encode()
        theirs = [r for r in rows if r.team == self.other]
        notes = [f"# {self.other} sync notes", ""] + [f"- {r.owner} owns {r.key} ({r.title}), due {r.due.isoformat()}."
                                                       for r in theirs]
        slug = self.other.lower().replace(" ", "-")
        self.out.files[f"sources/{slug}-notes.md"] = ("\n".join(notes) + "\n").encode()

    def draft(self, rows: list[Item], own_metrics: list[tuple[str, str, str, str]], banned: list[str]) -> None:
        out, rng = self.out, self.rng
        taken = {d for _, d in out.plans} | {self.start, self.end}
        free = [d for d in self.next_days if d not in taken] or [self.next_days[0] + dt.timedelta(days=7)]
        wrong_day = rng.choice(free)
        owners = {b.owner for b in out.blocked}
        wrong_owner = next((p for p in self.members + self.others if p not in owners), self.others[0])
        stale = next(r.key for r in rows if r.team == self.team and r.completed and r.completed < self.start)
        plans = [f"{item.key} due {(wrong_day if i == 0 else day).isoformat()}" for i, (item, day) in enumerate(out.plans)]
        stuck = [f"{b.key} ({b.blocker}, owner {wrong_owner if i == 0 else b.owner})" for i, b in enumerate(out.blocked)]
        figures = [f"{n} at {with_unit(old if i == 0 else value, u)}" for i, (n, value, u, old) in enumerate(own_metrics)]
        lines = [f"# Update for {self.team}", "",
                 "**This week**: shipped " + ", ".join([b.key for b in out.done] + [stale]) + ". "
                 + "; ".join(figures) + ".",
                 "**Coming up**: " + "; ".join(plans) + ".",
                 "**Stuck**: " + "; ".join(stuck) + "." + (f" We should {banned[0]} on these." if banned else "")]
        out.files["drafts/update-draft.md"] = ("\n".join(lines) + "\n").encode()
        out.absent.append({"what": "date", "value": wrong_day.isoformat()})
        out.absent_in.append({"kind": "problems", "what": "name", "value": wrong_owner})
