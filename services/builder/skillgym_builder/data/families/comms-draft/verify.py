"""Verifier for comms-draft: the update in /app/out/update.md parsed into the format the skill
prescribes (header, sections in order, sentence and word limits, banned terms) and matched
against the facts planted in the generated sources (each in its section) and the decoys that
must stay out. Facts are matched by normalized patterns, never by wording."""

import datetime
import hashlib
import os
import re
import sys
import unicodedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, load_expected, run, share, stated

E = load_expected()
FMT = E["format"]
MAX_BYTES = 64 * 1024
ABBREVIATIONS = re.compile(r"\b(e\.g|i\.e|vs|etc|approx|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.", re.I)


def read_update():
    path = app_path("out/update.md")
    if os.path.islink(path) or not os.path.isfile(path):
        raise ValueError("out/update.md is not a regular file")
    with open(path, "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError("out/update.md is too large")
    text = unicodedata.normalize("NFKC", data.decode("utf-8"))
    return re.sub(r"[\u2010-\u2015\u2212]", "-", text).replace("\u00a0", " ")


def plain(text):
    """A line without list markers and emphasis, spaces collapsed, case folded."""
    text = re.sub(r"^\s*(?:[-*+]\s+)?", "", text)
    return re.sub(r"\s+", " ", re.sub(r"[*_`]+", "", text)).strip().casefold()


def label_of(line):
    """The section label a line starts with (lines style) or is (headings style), or None."""
    for section in FMT["sections"]:
        label = section["label"].casefold()
        if FMT["style"] == "lines":
            if re.match(re.escape(label) + r"\s*:", plain(line)):
                return section["label"]
        else:
            heading = re.match(r"^\s*(#{1,6})\s+(.*)$", line)
            if heading and len(heading.group(1)) == FMT["level"]:
                title = re.sub(r"^[^\w]+", "", plain(heading.group(2))).rstrip(":").strip()
                if title == label:
                    return section["label"]
    return None


def parse():
    """(header line or None, [(label, section text lines)], lines outside any section)."""
    lines = [line.strip() for line in read_update().split("\n") if line.strip()]
    header, stray, sections = None, [], []
    if lines and label_of(lines[0]) is None:
        header, lines = lines[0], lines[1:]
    for line in lines:
        label = label_of(line)
        if label is not None:
            body = line.split(":", 1)[1] if FMT["style"] == "lines" else ""
            sections.append((label, [body.strip()] if body.strip() else []))
        elif sections and FMT["style"] == "headings" and not line.startswith("#"):
            sections[-1][1].append(line)
        else:
            stray.append(line)
    return header, sections, stray


def section_text(label):
    found = [body for name, body in parse()[1] if name == label]
    return " ".join(" ".join(body) for body in found)


def whole():
    return read_update()


# --- normalized patterns of planted values ---
def key_pattern(key):
    return r"(?<![\w-])" + re.escape(key.casefold()) + r"(?!\w)"


def date_pattern(iso):
    day = datetime.date.fromisoformat(iso)
    months = {day.strftime("%B").casefold(), day.strftime("%b").casefold()} | ({"sept"} if day.month == 9 else set())
    month = "(?:" + "|".join(sorted(months)) + r")\.?"
    number = str(day.day) + r"(?:st|nd|rd|th)?"
    return (r"(?<!\w)(?:" + re.escape(iso) + "|" + month + r"\s+" + number + "|" + number + r"\s+(?:of\s+)?" + month
            + r")(?![\w])")


def number_pattern(text):
    whole_part, _, decimals = text.partition(".")
    forms = {whole_part}
    if len(whole_part) > 3:
        forms.add(f"{int(whole_part):,}")
    body = "(?:" + "|".join(re.escape(f) for f in sorted(forms)) + ")" + (r"\." + decimals if decimals else "")
    return r"(?<![\w.,-])" + body + r"(?![\d]|[.,]\d)"


def name_pattern(name):
    return r"(?<!\w)" + r"\s+".join(re.escape(part.casefold()) for part in name.split()) + r"(?!\w)"


def found(pattern, text):
    return re.search(pattern, re.sub(r"[*_`]+", "", text).casefold()) is not None


PATTERNS = {"key": key_pattern, "date": date_pattern, "number": number_pattern, "name": name_pattern}


# --- format ---
def header_ok():
    header, _, _ = parse()
    wants = FMT.get("header")
    if not wants:
        return header is None
    if header is None:
        return False
    if FMT["style"] == "headings":
        heading = re.match(r"^(#{1,6})\s+", header)
        if not heading or len(heading.group(1)) >= FMT["level"]:
            return False
    checks = [not wants.get("team") or found(name_pattern(E["team"]), header),
              not wants.get("dates") or period_named(header),
              not wants.get("emoji") or any(unicodedata.category(c) == "So" for c in header)
              or re.search(r":[a-z0-9_+-]+:", header) is not None]
    return all(checks)


def period_named(header):
    """Both ends of the period, or a same-month range ("May 12-16", "12 to 16 May")."""
    if found(date_pattern(E["start"]), header) and found(date_pattern(E["end"]), header):
        return True
    first, last = datetime.date.fromisoformat(E["start"]), datetime.date.fromisoformat(E["end"])
    if first.month != last.month:
        return False
    month = "(?:" + first.strftime("%B").casefold() + "|" + first.strftime("%b").casefold() + r")\.?"
    days = str(first.day) + r"(?:st|nd|rd|th)?\s*(?:-|to)\s*" + str(last.day) + r"(?:st|nd|rd|th)?"
    return found(r"(?<!\w)(?:" + month + r"\s+" + days + "|" + days + r"\s+(?:of\s+)?" + month + r")(?!\w)", header)


def sections_ok():
    _, sections, stray = parse()
    wanted = [s["label"] for s in FMT["sections"]]
    return not stray and [name for name, _ in sections] == wanted and all(body for _, body in sections)


def sentences(text):
    text = ABBREVIATIONS.sub(lambda m: m.group(0)[:-1], text)
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if re.search(r"\w", s)]


def sentence_limits_ok():
    _, sections, _ = parse()
    limits = {s["label"]: s.get("max_sentences") for s in FMT["sections"]}
    for label, body in sections:
        text = " ".join(line if re.search(r"[.!?]$", line) else line + "." for line in
                        (re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", b) for b in body))
        if limits.get(label) and len(sentences(text)) > limits[label]:
            return False
    return True


def words_ok():
    return len([w for w in whole().split() if re.search(r"\w", w)]) <= E["word_limit"]


def banned_ok():
    return not any(found(name_pattern(term), whole()) for term in FMT.get("banned", []))


def unique_lines_ok():
    lines = [plain(line) for line in whole().split("\n") if len(line.split()) >= 5]
    return len(lines) == len(set(lines))


def shingles(text, size):
    words = re.findall(r"[a-z0-9]+", text.casefold())
    return {hashlib.sha256(" ".join(words[i:i + size]).encode()).hexdigest()[:12]
            for i in range(max(0, len(words) - size + 1))}


def not_copied():
    text, copied = whole(), E["copied"]
    holders = [s["placeholder"] for s in FMT["sections"] if s.get("placeholder")]
    holders += [FMT["header_placeholder"]] if FMT.get("header_placeholder") else []
    if any(plain(h) in plain(text) for h in holders):
        return False
    if shingles(text, copied["skill_size"]) & set(copied["skill"]):
        return False
    return not shingles(text, copied["sources_size"]) & set(copied["sources"])


def format_score():
    # a rule the skill does not state is no check of this instance: it could never fail
    unstated = {name for name, absent in (("sentence_limits", not any(s.get("max_sentences") for s in FMT["sections"])),
                                          ("banned", not FMT.get("banned"))) if absent}
    return share("format", stated([("header", header_ok), ("sections", sections_ok),
                                   ("sentence_limits", sentence_limits_ok), ("words", words_ok), ("banned", banned_ok),
                                   ("unique_lines", unique_lines_ok), ("not_copied", not_copied)], unstated))


# --- content ---
def fact_ok(fact):
    text = section_text(fact["section"])
    return all(found(PATTERNS[what](fact[what]), text) for what in ("key", "date", "name", "number") if what in fact)


def content_score():
    results = []
    for fact in E["facts"]:
        results.append((f"fact {fact}", fact_ok(fact)))
    text = whole()
    for decoy in E["absent"]:
        results.append((f"absent {decoy}", not found(PATTERNS[decoy["what"]](decoy["value"]), text)))
    for decoy in E["absent_in"]:
        inside = section_text(decoy["section"])
        results.append((f"absent from {decoy['section']} {decoy}", not found(PATTERNS[decoy["what"]](decoy["value"]), inside)))
    for name, ok in results:
        if not ok:
            print(f"  content: FAILED {name}")
    return sum(ok for _, ok in results) / len(results)


run([("format", format_score), ("content", content_score)])
