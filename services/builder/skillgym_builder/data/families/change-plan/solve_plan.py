# --- planning the change: grep the repository, read CI, schedule the work breakdown ---
import csv
import json
import os
import re
import sys

from planfacts import plan_template

TASK = json.loads(sys.argv[1])
TEMPLATE = plan_template() if TASK["from_skill"] else TASK["template"]


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def python_files(root):
    for folder in ("src", "tests"):
        for base, _, names in os.walk(os.path.join(root, folder)):
            for name in sorted(names):
                if name.endswith(".py"):
                    yield os.path.relpath(os.path.join(base, name), root)


request = read("CHANGE_REQUEST.md")
sources = {path: read(os.path.join("repo", path)) for path in python_files("repo")}
defined = {m for text in sources.values() for m in re.findall(r"^def (\w+)\(", text, re.M)}
function = next(name for name in re.findall(r"`(\w+)`", request) if name in defined)
parameter = re.search(r"keyword argument `(\w+)`", request).group(1)
word = re.compile(rf"\b{function}\b")
touched = sorted(path for path, text in sources.items() if word.search(text))
print("touched:", touched)

command = None
workflow = read("repo/.github/workflows/ci.yml").split("\n")
for index, line in enumerate(workflow):
    if re.search(r"name:.*test", line, re.I):
        for follow in workflow[index + 1:index + 3]:
            found = re.match(r"\s*run:\s*(.+)$", follow)
            if found:
                command = found.group(1).strip()
print("CI test command:", command)

definition = [p for p in touched if p.startswith("src/") and re.search(rf"^def {function}\(", sources[p], re.M)]
callers = [p for p in touched if p.startswith("src/") and p not in definition]
tests = [p for p in touched if p.startswith("tests/")]
changes = [f"Add the `{parameter}` keyword argument to `{function}` in `{p}`" for p in definition]
changes += [f"Update the call to `{function}` in `{p}` to pass `{parameter}` explicitly" for p in callers]
changes += [f"Extend `{p}` to cover both `{parameter}` settings" for p in tests]
if len(changes) + 2 > TEMPLATE["max_items"]:
    changes = [f"Add the `{parameter}` keyword argument to `{function}` and pass it from every caller in "
               + ", ".join(f"`{p}`" for p in definition + callers),
               "Extend " + ", ".join(f"`{p}`" for p in tests) + f" to cover both `{parameter}` settings"]
extras = [f"Check the edge case where a caller passes `{parameter}` as None",
          f"Document the new `{parameter}` argument next to `{function}`",
          "Confirm no other module relies on the old signature"]
items = [f"Review `CHANGE_REQUEST.md` and every use of `{function}`", *changes]
while len(items) + 1 < TEMPLATE["min_items"] and extras:
    items.append(extras.pop(0))
items.append(f"Run `{command}` and confirm the whole suite passes")

lines = [f"# {TEMPLATE['title']}", "",
         f"Add the `{parameter}` argument to `{function}`, make every caller pass it, and test both settings.", ""]
for section in TEMPLATE["sections"]:
    lines += [f"## {section}"]
    if section == TEMPLATE["checklist"]:
        lines += [f"{TEMPLATE['marker']} {item}." for item in items]
    elif section == TEMPLATE["scope"]:
        texts = [f"the `{function}` signature, its callers and their tests",
                 "unrelated modules and the look-alike legacy helpers"]
        lines += [f"- {label}: {texts[min(i, 1)]}" for i, label in enumerate(TEMPLATE["labels"])]
    elif section == TEMPLATE["questions"]:
        lines += [f"- Should `{parameter}` get a default once every caller passes it?"]
    else:
        lines += [f"The request changes `{function}`; the plan keeps the change to the code that uses it."]
    lines.append("")
os.makedirs("out", exist_ok=True)
with open("out/plan.md", "w", encoding="utf-8") as handle:
    handle.write("\n".join(lines).rstrip() + "\n")

if TASK["schedule"]:
    with open("work/breakdown.csv", encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    duration = {r["id"]: int(r["duration_days"]) for r in rows}
    wanted = {r["id"]: [d for d in r["depends_on"].split(";") if d] for r in rows}
    errors = [{"kind": "missing_task", "task": t, "dependency": d}
              for t in sorted(wanted) for d in wanted[t] if d not in duration]
    deps = {t: [d for d in ds if d in duration] for t, ds in wanted.items()}
    # Kahn's algorithm: what it never reaches is on a cycle or downstream of one
    waiting = {t: len(ds) for t, ds in deps.items()}
    users = {t: [u for u, ds in deps.items() if t in ds] for t in deps}
    queue = sorted(t for t, n in waiting.items() if n == 0)
    start, order = {}, []
    while queue:
        task = queue.pop(0)
        order.append(task)
        start[task] = max((start[d] + duration[d] for d in deps[task]), default=0)
        for user in users[task]:
            waiting[user] -= 1
            if waiting[user] == 0:
                queue.append(user)
    blocked = sorted(set(deps) - set(start))
    # a task is on a cycle when it can reach itself through blocked tasks
    def reach(task):
        seen, stack = set(), list(deps[task])
        while stack:
            node = stack.pop()
            if node not in seen and node in blocked:
                seen.add(node)
                stack.extend(deps[node])
        return seen
    reaches = {t: reach(t) for t in blocked}
    cycles = sorted({tuple(sorted(u for u in reaches[t] if t in reaches[u])) for t in blocked if t in reaches[t]})
    errors += [{"kind": "cycle", "tasks": list(c)} for c in cycles]
    finish = {t: start[t] + duration[t] for t in start}
    total = max(finish.values(), default=0)
    latest = {t: total for t in start}
    for task in reversed(order):
        for d in deps[task]:
            latest[d] = min(latest[d], latest[task] - duration[task])
    critical = sorted((t for t in start if latest[t] == finish[t]), key=lambda t: (start[t], t))
    result = {"tasks": {t: {"earliest_start": start[t], "earliest_finish": finish[t]} for t in sorted(start)},
              "critical_path": critical, "total_duration": total, "errors": errors, "unscheduled": blocked}
    with open("out/schedule.json", "w", encoding="utf-8") as handle:
        json.dump(result, handle, indent=2)
