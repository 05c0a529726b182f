# --- planning the change: parse the code, read CI, schedule by longest paths ---
import ast
import csv
import json
import re
import sys
from functools import cache
from pathlib import Path

from planfacts import plan_template

TASK = json.loads(sys.argv[1])
TEMPLATE = plan_template() if TASK["from_skill"] else TASK["template"]
REPO = Path("repo")

trees = {p.relative_to(REPO).as_posix(): ast.parse(p.read_text(encoding="utf-8"))
         for folder in ("src", "tests") for p in sorted((REPO / folder).rglob("*.py"))}
functions = {n.name for tree in trees.values() for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
request = Path("CHANGE_REQUEST.md").read_text(encoding="utf-8")
target = next(t for t in re.findall(r"`([A-Za-z_]\w*)`", request) if t in functions)
argument = re.findall(r"`([A-Za-z_]\w*)`", request.split("keyword argument", 1)[1])[0]


def names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            yield node.name
        elif isinstance(node, ast.Name):
            yield node.id
        elif isinstance(node, ast.alias):
            yield node.name
        elif isinstance(node, ast.Attribute):
            yield node.attr


uses = sorted(path for path, tree in trees.items() if target in set(names(tree)))
run_lines = re.findall(r"-\s*name:\s*([^\n]+)\n\s*run:\s*([^\n]+)", (REPO / ".github/workflows/ci.yml").read_text())
command = next(cmd.strip() for name, cmd in run_lines if "test" in name.lower())

code = [p for p in uses if p.startswith("src/")]
tests = [p for p in uses if p.startswith("tests/")]
steps = [f"Read the request and trace `{target}` through the code"]
per_file = [f"Change `{p}` for the new `{argument}` argument" for p in code]
per_file += [f"Add tests in `{p}` for `{argument}` on and off" for p in tests]
if len(per_file) + 2 <= TEMPLATE["max_items"]:
    steps += per_file
else:
    steps += ["Change " + ", ".join(f"`{p}`" for p in code) + f" for the new `{argument}` argument",
              "Add tests in " + ", ".join(f"`{p}`" for p in tests) + f" for `{argument}` on and off"]
padding = ["Verify that callers outside the package are unaffected", "Note the signature change in the changelog",
           f"Decide how `{argument}` behaves when it is missing"]
while len(steps) < TEMPLATE["min_items"] - 1:
    steps.append(padding.pop())
steps.append(f"Run the CI test command `{command}`")

out = [f"# {TEMPLATE['title']}", f"`{target}` gains a required `{argument}` argument; callers and tests follow.", ""]
for section in TEMPLATE["sections"]:
    out.append(f"## {section}")
    if section == TEMPLATE["checklist"]:
        out += [f"{TEMPLATE['marker']} {step}" for step in steps]
    elif section == TEMPLATE["scope"]:
        labels = TEMPLATE["labels"]
        out += [f"- {labels[0]}: {target} and every place that calls it"]
        out += [f"- {label}: anything that never calls {target}" for label in labels[1:]]
    elif section == TEMPLATE["questions"]:
        out += [f"- Is there code outside this repository that calls `{target}`?",
                "- Does the release need a deprecation period?"][: TEMPLATE["max_questions"]]
    else:
        out.append(f"Only code that uses `{target}` changes.")
    out.append("")
Path("out").mkdir(exist_ok=True)
Path("out/plan.md").write_text("\n".join(out), encoding="utf-8")

if TASK["schedule"]:
    with open("work/breakdown.csv", encoding="utf-8", newline="") as handle:
        rows = {r["id"]: r for r in csv.DictReader(handle)}
    listed = {t: [d for d in r["depends_on"].split(";") if d] for t, r in rows.items()}
    errors = [{"kind": "missing_task", "task": t, "dependency": d} for t in sorted(listed) for d in listed[t]
              if d not in rows]
    deps = {t: [d for d in ds if d in rows] for t, ds in listed.items()}
    colour, cyclic, cycles = {}, set(), []

    def visit(task, trail):
        colour[task] = "grey"
        for d in deps[task]:
            if colour.get(d) == "grey":
                loop = trail[trail.index(d):]
                cycles.append(sorted(loop))
                cyclic.update(loop)
            elif d not in colour:
                visit(d, [*trail, d])
        colour[task] = "black"

    for task in sorted(deps):
        if task not in colour:
            visit(task, [task])

    @cache
    def blocked(task):
        return task in cyclic or any(blocked(d) for d in deps[task])

    @cache
    def earliest(task):
        return max((earliest(d) + int(rows[d]["duration_days"]) for d in deps[task]), default=0)

    ok = [t for t in sorted(deps) if not blocked(t)]
    ends = {t: earliest(t) + int(rows[t]["duration_days"]) for t in ok}
    total = max(ends.values(), default=0)
    path, task = [], max(ok, key=lambda t: ends[t])
    while True:  # walk back along the dependencies that finish exactly when the task starts
        path.append(task)
        before = [d for d in deps[task] if ends[d] == earliest(task)]
        if not before:
            break
        task = before[0]
    schedule = {"total_duration": total, "critical_path": path[::-1],
                "tasks": {t: {"earliest_start": earliest(t), "earliest_finish": ends[t]} for t in ok},
                "errors": errors + [{"kind": "cycle", "tasks": c} for c in sorted(map(list, {tuple(c) for c in cycles}))],
                "unscheduled": sorted(set(deps) - set(ok))}
    Path("out/schedule.json").write_text(json.dumps(schedule, sort_keys=True), encoding="utf-8")
