"""Verifier for change-plan: the plan against the skill's template (title, sections, intro,
scope labels, checklist syntax and bounds, verb-first distinct items, question limit), the
files its items name against the touched and look-alike paths (held as digests), the CI test
command after the code changes, and the schedule recomputed from the protected work breakdown
by the critical path method."""

import collections
import csv
import hashlib
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, exact_int, load_expected, norm, read_json, run, share, stated

E = load_expected()
T = E["template"]
MAX_BYTES = 256 * 1024
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")
ITEM = re.compile(r"^\s*(?:[-*]\s+)?\[ \]\s+(\S.*)$")
BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(\S.*)$")
PATH = re.compile(r"(?<![\w.-])((?:[\w.-]+/)*[\w.-]+\.py)(?![\w])")
VERBS = frozenset("""
add adjust agree align analyse analyze annotate apply archive ask assess assign attach audit automate backfill
benchmark bisect bound break build bump bundle cache call cap capture change chart check choose clarify clean
clone close collect commit communicate compare compile compose configure confirm connect consolidate convert
coordinate copy cover create debug decide decouple deduplicate define delegate delete demo deploy deprecate
derive design detect determine diff disable discuss dispatch divide document double-check downgrade draft drop
dry-run edit email enable encode ensure escalate establish estimate evaluate examine exercise expand explain
explore export expose extend extract fetch file fill filter finalize finish fix flag follow fork format freeze
gather generate get give group guard handle harden hold hook identify implement import include index inform
initialise initialize inline inspect install instrument integrate introduce investigate invite isolate join
keep label land launch learn limit link lint list load locate lock log make map mark measure merge migrate
mirror mock model monitor mount move name narrow normalise normalize note notify observe open order organise
organize outline own pair parse pass patch pause pick pin plan point poll port post prepare present preserve
print prioritise prioritize probe profile promote propagate prototype prove provision prune publish pull push
put query queue raise rank re-run reach read rebase recheck reconcile record redeploy reduce refactor refresh
register reindex reject release reload remove rename repair repeat rephrase replace replay report reproduce
request require rerun research reset resolve restore restructure retest retire retry return reuse review
revise rewire rewrite roll rollback rotate route run sample save scan schedule scope script search seed select
send separate serve set settle share ship show sign simplify sketch skim sort specify spike split stage start
store strip stub submit summarize support swap switch sync tag take tell test thread tighten time toggle trace
track translate trigger trim tune turn undo unify unpin unskip update upgrade use validate verify vet wait
walk warn watch widen wire wrap write
""".split())  # noqa: SIM905 - a word list reads better as text


def text():
    path = app_path("out/plan.md")
    if os.path.getsize(path) > MAX_BYTES:
        raise ValueError("plan too large")
    with open(path, encoding="utf-8") as handle:
        lines = handle.read(MAX_BYTES).replace("\r\n", "\n").split("\n")
    content = [i for i, line in enumerate(lines) if line.strip()]
    if len(content) >= 2 and FENCE.match(lines[content[0]]) and FENCE.match(lines[content[-1]]):
        lines = lines[content[0] + 1:content[-1]]  # the whole plan wrapped in one fence
    return lines


def parse():
    """(headings as (level, text, line index), sections name -> non-blank lines, intro lines)."""
    lines, headings, fenced = text(), [], False
    for index, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := HEADING.match(line)):
            headings.append((len(match.group(1)), match.group(2), index))
    sections = collections.OrderedDict()
    tops = [h for h in headings if h[0] <= 2]
    for n, (level, name, index) in enumerate(tops):
        end = tops[n + 1][2] if n + 1 < len(tops) else len(lines)
        if level == 2:
            sections.setdefault(norm(name), []).extend(line for line in lines[index + 1:end] if line.strip())
    intro = []
    if tops and tops[0][0] == 1:
        end = tops[1][2] if len(tops) > 1 else len(lines)
        intro = [line for line in lines[tops[0][2] + 1:end] if line.strip()]
    return lines, headings, sections, intro


def items():
    _, _, sections, _ = parse()
    rows = sections.get(norm(T["checklist"]), [])
    return [m.group(1) for row in rows if (m := ITEM.match(row))], rows


def first_word(item):
    word = re.sub(r"^[\W_]+", "", re.sub(r"[*_`]+", "", item)).split(" ", 1)[0]
    return re.sub(r"[^A-Za-z-]", "", word).casefold()


def template():
    lines, headings, sections, intro = parse()
    found, rows = items()
    wanted = [norm(s) for s in T["sections"]]
    optional = norm(T["questions"]) if T.get("questions") else None
    got = [norm(h[1]) for h in headings if h[0] == 2]
    first = next((line for line in lines if line.strip()), "")
    checks = {
        "title": [h for h in headings if h[0] == 1] == headings[:1] and len(headings) > 0 and headings[0][0] == 1
        and norm(headings[0][1]) == norm(T["title"]) and HEADING.match(first) is not None,
        "sections": got == wanted or (optional is not None and got == [w for w in wanted if w != optional]),
        "intro": bool(intro) and not any(ITEM.match(line) for line in intro),
        "scope": not T.get("scope") or all(
            any(re.match(rf"^\s*[-*]\s+\**{re.escape(label)}\**\s*:\**\s*\S", row, re.I)
                for row in sections.get(norm(T["scope"]), [])) for label in T["labels"]),
        "checkbox syntax": bool(rows) and len(found) == len(rows),
        "item bounds": T["min_items"] <= len(found) <= T["max_items"],
        "distinct items": len({norm(i) for i in found}) == len(found),
        "verb first": not T.get("verb_first") or all(first_word(i) in VERBS for i in found),
        "questions": questions_ok(sections),
        "no placeholders": not any(f"<{p}>" in line for p in T.get("placeholders", []) for line in lines)
        and not any(re.search(r"<(step|question)\s*\d*>", line, re.I) for line in lines),
    }
    # a rule the skill's template does not state is no check of this instance: it could never fail
    unstated = {name for name, absent in (("scope", not T.get("scope")), ("verb_first", not T.get("verb_first"))) if absent}
    return share("template", stated([(name.replace(" ", "_"), lambda ok=ok: ok) for name, ok in checks.items()], unstated))


def questions_ok(sections):
    """The questions section may be left out; when present it holds 1..max distinct bullets."""
    name = T.get("questions")
    if not name or norm(name) not in sections:
        return True
    rows = sections[norm(name)]
    asked = [m.group(1) for row in rows if (m := BULLET.match(row))]
    return 1 <= len(asked) == len(rows) <= T["max_questions"] and len({norm(a) for a in asked}) == len(asked)


def named(item):
    out = set()
    for path in PATH.findall(item):
        path = path.lstrip("./") if path.startswith("./") else path
        for prefix in ("app/", "repo/"):
            if path.startswith(prefix):
                path = path[len(prefix):]
        out.add(path)
    return out


def digest(path):
    return hashlib.sha256(path.encode()).hexdigest()


def files():
    found, _ = items()
    paths = {digest(p) for item in found for p in named(item)}
    missing = len(set(E["affected"]) - paths)
    wrong = len(set(E["decoys"]) & paths)
    print(f"files: {missing} touched file(s) not named, {wrong} look-alike(s) named")
    return missing == 0 and wrong == 0


def validation():
    found, _ = items()
    command = " ".join(E["test_command"].split())
    runs = [i for i, item in enumerate(found) if command in " ".join(item.split())]
    changes = [i for i, item in enumerate(found)
               if any(p.startswith("src/") and digest(p) in E["affected"] for p in named(item))]
    return bool(runs) and all(i < max(runs) for i in changes)


def breakdown():
    with open(app_path(E["schedule"]), encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    duration = {r["id"]: int(r["duration_days"]) for r in rows}
    listed = {r["id"]: [d for d in r["depends_on"].split(";") if d] for r in rows}
    errors = [("missing_task", t, d) for t in listed for d in listed[t] if d not in duration]
    deps = {t: [d for d in ds if d in duration] for t, ds in listed.items()}
    start, pending = {}, set(deps)
    while True:
        ready = sorted(t for t in pending if all(d in start for d in deps[t]))
        if not ready:
            break
        for t in ready:
            start[t] = max((start[d] + duration[d] for d in deps[t]), default=0)
            pending.discard(t)
    closure = {t: set(deps[t]) for t in pending}
    changed = True
    while changed:
        changed = False
        for t in pending:
            grown = closure[t] | {x for d in closure[t] if d in pending for x in closure[d]}
            if grown != closure[t]:
                closure[t], changed = grown, True
    for t in pending:
        if t in closure[t]:
            errors.append(("cycle", tuple(sorted(u for u in pending if u in closure[t] and t in closure[u]))))
    finish = {t: start[t] + duration[t] for t in start}
    total = max(finish.values(), default=0)
    latest = {t: total for t in start}
    for t in sorted(start, key=lambda t: -start[t]):
        for d in deps[t]:
            latest[d] = min(latest[d], latest[t] - duration[t])
    critical = sorted((t for t in start if latest[t] == finish[t]), key=lambda t: (start[t], t))
    return start, finish, critical, total, collections.Counter(set(errors)), sorted(pending)


def reported_error(entry):
    if entry["kind"] == "missing_task":
        return ("missing_task", entry["task"], entry["dependency"])
    if entry["kind"] == "cycle":
        if entry["tasks"] != sorted(entry["tasks"]):
            raise ValueError("cycle tasks not sorted")
        return ("cycle", tuple(entry["tasks"]))
    raise ValueError(f"unknown error kind {entry['kind']!r}")


def schedule():
    start, finish, critical, total, errors, unscheduled = breakdown()
    got = read_json("out/schedule.json")
    tasks = got["tasks"]
    checks = {
        "tasks": set(tasks) == set(start) and all(
            set(tasks[t]) >= {"earliest_start", "earliest_finish"} and exact_int(tasks[t]["earliest_start"], start[t])
            and exact_int(tasks[t]["earliest_finish"], finish[t]) for t in start),
        "critical path": got["critical_path"] == critical,
        "total": exact_int(got["total_duration"], total),
        "errors": collections.Counter(reported_error(e) for e in got["errors"]) == errors,
        "unscheduled": got["unscheduled"] == unscheduled,
    }
    for name, ok in checks.items():
        if not ok:
            print(f"schedule: {name} wrong")
    return all(checks.values())


checks = [("template", template), ("files", files), ("validation", validation)]
if E.get("schedule"):
    checks.append(("schedule", schedule))
run(checks)
