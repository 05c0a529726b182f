# --- reading the plan template from the installed skill (python3 standard library) ---
import glob
import re

FENCE = re.compile(r"^\s*(```|~~~)")
CHECKBOX = re.compile(r"^\s*([-*]\s+)?\[ \]\s*(.*)$")
LABEL = re.compile(r"^\s*[-*]\s+([A-Za-z][\w ]{0,30}):\s*(<[^>]*>)?\s*$")
BOUNDS = re.compile(r"(\d+)\s*(?:\u2013|\u2014|-|to)\s*(\d+)\s+(?:[\w-]+\s+){0,2}items\b", re.I)
AT_MOST = re.compile(r"\b(?:max(?:imum)?|at most|up to|no more than)\s*:?\s*(\d+)", re.I)
VERB_FIRST = re.compile(r"verb[- ]first|imperative|start(?:s|ing)? with (?:a|an) (?:action )?verb", re.I)


def clean(text):
    return re.sub(r"[*_`]+", "", text).strip()


def skill_text():
    paths = sorted(glob.glob("/skills/*/SKILL.md"))
    if not paths:
        raise SystemExit("no skill installed under /skills")
    with open(paths[0], encoding="utf-8-sig") as handle:
        return handle.read().replace("\r\n", "\n")


def template_of(body):
    titles = [line[2:].strip() for line in body if re.match(r"^#\s+\S", line)]
    sections, current = {}, None
    for line in body:
        heading = re.match(r"^##\s+(.+?)\s*$", line)
        if heading:
            current = clean(heading.group(1))
            sections[current] = []
        elif current is not None and line.strip():
            sections[current].append(line)
    checklist = next((n for n, rows in sections.items() if any(CHECKBOX.match(r) for r in rows)), None)
    if len(titles) != 1 or len(sections) < 2 or checklist is None:
        return None
    marker_line = next(r for r in sections[checklist] if CHECKBOX.match(r))
    labelled = {n: [m.group(1).strip() for r in rows for m in [LABEL.match(r)] if m] for n, rows in sections.items()}
    scope = next((n for n, labels in labelled.items() if len(labels) >= 2), None)
    return {
        "title": clean(titles[0]), "sections": list(sections), "checklist": checklist,
        "marker": "- [ ]" if re.match(r"^\s*[-*]\s", marker_line) else "[ ]",
        "scope": scope, "labels": labelled[scope] if scope else [],
        "questions": next((n for n in sections if re.search(r"question|unknown", n, re.I)), None),
    }


def plan_template():
    """The skill's plan template with its item bounds, question limit and verb-first rule."""
    lines = skill_text().split("\n")
    start = 0
    if lines and lines[0].strip() == "---":
        start = next((i + 1 for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), 0)
    prose, blocks, block = [], [], None
    for line in lines[start:]:
        if FENCE.match(line):
            if block is None:
                block = []
            else:
                blocks.append(block)
                block = None
            continue
        (prose if block is None else block).append(line)
    text = "\n".join(clean(line) for line in prose)
    for body in blocks:
        template = template_of(body)
        if not template:
            continue
        bounds = next((m for m in BOUNDS.finditer(text) if int(m.group(1)) < int(m.group(2))), None)
        template["min_items"], template["max_items"] = (int(bounds.group(1)), int(bounds.group(2))) if bounds else (4, 12)
        template["max_questions"] = 3
        for line in text.split("\n") if template["questions"] else []:
            limit = AT_MOST.search(line)
            if limit and template["questions"].casefold() in line.casefold():
                template["max_questions"] = int(limit.group(1))
                break
        template["verb_first"] = True
        return template
    raise SystemExit("the skill has no plan template")
