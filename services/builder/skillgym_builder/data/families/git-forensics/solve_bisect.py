# --- bisect with `git bisect run`, fix on a branch, report ---
import json
import os
import subprocess
import sys

from conventions import commit_fix, fix_plan, write_report

TASK = json.loads(sys.argv[1])
os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
os.chdir("/app/repo")
JUDGE = """import subprocess, sys
done = subprocess.run([sys.executable, "-m", "unittest", sys.argv[1]], capture_output=True, text=True)
text = done.stdout + done.stderr
if done.returncode == 0:
    sys.exit(0)
if "failures=" in text and "errors=" not in text:
    sys.exit(1)
sys.exit(125)  # the test did not even run here: tell bisect to skip this commit
"""


def git(*args):
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout


def bisect():
    with open("/tmp/work/judge.py", "w", encoding="utf-8") as handle:
        handle.write(JUDGE)
    git("bisect", "start", "main", TASK["good"])
    try:
        out = git("bisect", "run", sys.executable, "/tmp/work/judge.py", TASK["test"])
    finally:
        git("bisect", "reset")
    print(out[-1500:])
    return next(line.split()[0] for line in out.splitlines() if line.endswith("is the first bad commit"))


def details(commit):
    name, email, date = git("show", "-s", "--format=%an%n%ae%n%aI", commit).splitlines()
    files = git("diff-tree", "--no-commit-id", "-r", "--name-only", commit).split()
    return {"commit": commit, "author_name": name, "author_email": email, "author_date": date, "files": files}


def fix(bad):
    """Undo the regression's change to the module on top of main, keeping later edits."""
    path = TASK["module_path"]
    diff = git("diff", f"{bad}^", bad, "--", path).splitlines()
    removed = "\n".join(line[1:] for line in diff if line.startswith("-") and not line.startswith("---"))
    added = "\n".join(line[1:] for line in diff if line.startswith("+") and not line.startswith("+++"))
    branch, message, signoff = fix_plan(TASK, f"restore the {TASK['slug'][8:].replace('-', '_')} arithmetic",
                                        f"{bad[:12]} changed the computation and broke {TASK['test']}.")
    git("switch", "-q", "-c", branch, "main")
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    assert text.count(added) == 1, "the regression's lines are not unique"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.replace(added, removed))
    subprocess.run([sys.executable, "-m", "unittest", TASK["test"]], check=True)
    return {"branch": branch, "commit": commit_fix(TASK, [path], message, signoff)}


def leak():
    log = git("log", "--all", "--reverse", "-p", "--format=commit %H", "-G", "TOKEN=")
    found, commit, path = {}, None, None
    for line in log.splitlines():
        if line.startswith("commit "):
            commit = line.split()[1]
        elif line.startswith("diff --git "):
            path = line.split(" b/", 1)[1]
        elif line.startswith("+") and "TOKEN=" in line and "added_in" not in found:
            found.update(path=path, added_in=commit)
        elif line.startswith("-") and "TOKEN=" in line and path == found.get("path"):
            found["removed_in"] = commit
    return found


def changelog(start, end):
    groups = {}
    for line in git("log", "--no-merges", "--format=%H%x09%s", f"{start}..{end}").splitlines():
        commit, subject = line.split("\t", 1)
        head = subject.split(":", 1)[0] if ":" in subject else ""
        kind = head.split("(", 1)[0].rstrip("!")
        groups.setdefault(kind if kind.isalpha() and kind.islower() else "other", []).append(commit)
    return {"from": start, "to": end, "groups": groups}


bad = bisect()
report = {"first_bad": details(bad), "fix": fix(bad)}
if TASK["leak"]:
    report["leak"] = leak()
if TASK["changelog"]:
    report["changelog"] = changelog(*TASK["changelog"])
write_report(report)
print(json.dumps(report, indent=2))
