# --- reading the compound-triage rules from the installed skill (python3 standard library) ---
import re

from skill_text import HEADING, numbered_skill_lines

FILTER_HEADING = re.compile(r"filter|\brules?\b|drug[- ]?lik|lead[- ]?lik|triage|criteria|profile|cut-?offs?|thresholds?",
                            re.I)
ALIASES = (
    ("mw", r"\bMW\b|molecular weight|mol\.? ?wt"),
    ("logp", r"\bc?log ?P\b"),
    ("tpsa", r"\bT?PSA\b|polar surface area"),
    ("hbd", r"\bHBDs?\b|\b(?:H-?bond|hydrogen[- ]bond) donors?\b"),
    ("hba", r"\bHBAs?\b|\b(?:H-?bond|hydrogen[- ]bond) acceptors?\b"),
    ("rotatable_bonds", r"\brotatable bonds?\b|\bRotB\b"),
    ("rings", r"\bring count\b|\bnumber of rings\b"),
)
COMPARATOR = r"(<=|=<|≤|<|>=|=>|≥|>|at most|no more than|not more than|up to|at least|no less than|not less than)"
OPS = {"=<": "<=", "≤": "<=", "at most": "<=", "no more than": "<=", "not more than": "<=", "up to": "<=",
       "=>": ">=", "≥": ">=", "at least": ">=", "no less than": ">=", "not less than": ">="}
THRESHOLDS = [(name, re.compile(rf"(?:{alias})[^\n<>≤≥=\d]{{0,30}}?{COMPARATOR}\s*(-?\d+(?:\.\d+)?)", re.I))
              for name, alias in ALIASES]
ALLOWANCE = re.compile(r"\b(?:at most|no more than|not more than|up to|maximum of)\s+(zero|no|one|two|three|\d)\b", re.I)
NUMBER_WORDS = {"zero": 0, "no": 0, "one": 1, "two": 2, "three": 3}
STEREO_CUE = re.compile(r"\b(?:(distinct|different|separate\w*|keep\w*|kept|retain\w*|preserv\w*)|"
                        r"(ignor\w*|strip\w*|drop\w*|remov\w*|discard\w*|collaps\w*|merg\w*|same (?:compound|molecule|parent)))\b",
                        re.I)
NEGATION = re.compile(r"\b(not|never|no|don't|do not)\b[\w\s]{0,25}$", re.I)


def parse_filter_rule(lines):
    """(rule, line) from SKILL.md lines: the thresholds ({descriptor: [op, limit]}) under a
    filter/rules heading and how many violations the skill tolerates (none unless it says)."""
    thresholds, allowed, inside, first = {}, 0, False, None
    for number, raw in lines:
        heading = HEADING.match(raw)
        if heading:
            inside = bool(FILTER_HEADING.search(heading.group(2)))
            continue
        if not inside:
            continue
        for name, pattern in THRESHOLDS:
            found = pattern.search(raw)
            if found and name not in thresholds:
                op = OPS.get(found.group(1).lower(), found.group(1))
                thresholds[name] = [op, float(found.group(2))]
                first = first or number
        if re.search(r"violat|break|fail", raw, re.I):
            allowance = ALLOWANCE.search(raw)
            if allowance:
                word = allowance.group(1).lower()
                allowed = NUMBER_WORDS[word] if word in NUMBER_WORDS else int(word)
    if len(thresholds) < 3:
        return None
    return {"thresholds": thresholds, "max_violations": allowed}, first


def parse_stereo_policy(lines):
    """(collapse or distinct, line): whether stereoisomers count as one compound, read from the
    first keep/strip cue on a line about stereo (a negated cue means the opposite)."""
    for number, raw in lines:
        if not re.search(r"stereo", raw, re.I):
            continue
        cue = STEREO_CUE.search(raw)
        if cue:
            distinct = cue.group(1) is not None
            if NEGATION.search(raw[: cue.start()]):
                distinct = not distinct
            return ("distinct" if distinct else "collapse"), number
    return None


def filter_rule():
    found = parse_filter_rule(numbered_skill_lines())
    if found is None:
        raise SystemExit("the skill states no filter thresholds")
    return found[0]


def stereo_policy():
    found = parse_stereo_policy(numbered_skill_lines())
    if found is None:
        raise SystemExit("the skill states no stereo policy")
    return found[0]
