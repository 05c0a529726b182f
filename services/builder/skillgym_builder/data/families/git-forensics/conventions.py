# --- the commit conventions the installed skill prescribes (python3 standard library) ---
import json
import os
import re
import subprocess

from skill_text import skill_lines

PLACEHOLDERS = {"ticket": "ticket", "issue": "ticket", "id": "ticket", "ticket-id": "ticket", "issue-id": "ticket",
                "slug": "slug", "summary": "slug", "description": "slug", "short-description": "slug",
                "topic": "slug", "type": "type"}
BRANCH_TOKEN = re.compile(r"`([a-z][\w.-]*/(?:[\w.-]|<[\w-]+>)+)`")
HEADER_TOKEN = re.compile(r"`<type>(\(<scope>\))?!?: <[\w -]+>`")
CONVENTIONAL_NAME = re.compile(r"\bconventional commits?\b", re.I)
FOOTER_TOKEN = re.compile(r"`([A-Z][A-Za-z-]*): #?<(?:ticket|issue|id|ticket-id|issue-id)>`")
SIGNOFF = re.compile(r"signed-off-by|\bsign[- ]?offs?\b|\bDCO\b", re.I)


def branch_template(line):
    if not re.search(r"\bbranch", line, re.I):
        return None
    for token in BRANCH_TOKEN.findall(line):
        names = [n.lower() for n in re.findall(r"<([\w-]+)>", token)]
        if names and all(n in PLACEHOLDERS for n in names) and any(PLACEHOLDERS[n] in ("ticket", "slug") for n in names):
            return token
    return None


def skill_conventions():
    """{"branch", "header", "footer", "signoff"} as the skill states them (None where it is silent)."""
    lines = skill_lines(required=False)
    found = {"branch": None, "header": None, "footer": None, "signoff": None}
    if lines is None:
        return found
    for line in lines:
        if found["branch"] is None:
            found["branch"] = branch_template(line)
        header = HEADER_TOKEN.search(line)
        if header and found["header"] is None:
            found["header"] = "scope" if header.group(1) else "plain"
        footer = FOOTER_TOKEN.search(line)
        if footer and found["footer"] is None:
            found["footer"] = footer.group(1)
        if found["signoff"] is None and SIGNOFF.search(line):
            found["signoff"] = True
    if found["header"] is None and any(CONVENTIONAL_NAME.search(line) for line in lines):
        found["header"] = "plain"
    return found


def fill(template, ticket, slug):
    def value(match):
        kind = PLACEHOLDERS.get(match.group(1).lower())
        return {"ticket": ticket, "slug": slug, "type": "fix"}.get(kind, match.group(0))
    return re.sub(r"<([\w-]+)>", value, template)


def fix_plan(task, summary, body):
    """(branch name, commit message, sign off?) under the task's conventions: the skill's where the
    instruction defers to it, the instruction's otherwise; a guess where the skill is missing."""
    skill = skill_conventions()
    deferred = set(task["from_skill"])
    template = (skill["branch"] or "fix/<slug>") if "branch" in deferred else task["default_branch"]
    scoped = "header" in deferred and skill["header"] == "scope"
    scope = task["module_path"].rsplit("/", 1)[-1][:-3]
    header = f"fix({scope}): {summary}" if scoped else f"fix: {summary}"
    message = header + "\n\n" + body + "\n"
    if "footer" in deferred and skill["footer"]:
        message += f"\n{skill['footer']}: {task['ticket']}\n"
    signoff = "signoff" in deferred and bool(skill["signoff"])
    return fill(template, task["ticket"], task["slug"]), message, signoff


def commit_fix(task, paths, message, signoff):
    """Commit the staged fix on the current branch as the task's identity; returns its id."""
    who = task["identity"]
    env = dict(os.environ, GIT_AUTHOR_NAME=who["name"], GIT_AUTHOR_EMAIL=who["email"],
               GIT_COMMITTER_NAME=who["name"], GIT_COMMITTER_EMAIL=who["email"])
    subprocess.run(["git", "add", "--", *paths], check=True)
    subprocess.run(["git", "commit", "-q", "-F", "-", *(["-s"] if signoff else [])], input=message, text=True,
                   env=env, check=True)
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()


def write_report(report):
    os.makedirs("/app/out", exist_ok=True)
    with open("/app/out/forensics.json", "w", encoding="utf-8") as handle:
        json.dump(report, handle, indent=2)
