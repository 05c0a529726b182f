# --- reading the sequencing QC rules from the installed skill (python3 standard library) ---
import re

from skill_text import numbered_skill_lines

QUALITY = re.compile(r"\b(?:mean|average)\b[^.\n]{0,40}?\b(?:quality|phred|Q)\b[^.\n]{0,40}?"
                     r"(?:below|under|less than|lower than|<)\s*(?:Q|phred\s*)?(\d+)\b", re.I)
ORF_MIN = re.compile(r"\bORFs?\b[^.\n]{0,60}?(?:at least|>=|≥|minimum(?: length)?(?: of)?|shorter than|fewer than)\s*"
                     r"(\d+)\s*(?:codons|amino acids|aa|residues)\b", re.I)
TABLE = re.compile(r"\b(?:translation|codon|genetic[- ]code)\s+table\s+(\d+)\b|\btransl_table\s*=\s*(\d+)", re.I)
SUPPORTED_TABLES = (1, 4, 11)  # tables where ATG is the only codon read as M


def _first(lines, pattern, accept=lambda value: True):
    """The first accepted match, reading each line together with the next (prose wraps)."""
    for index, (number, raw) in enumerate(lines):
        following = lines[index + 1][1] if index + 1 < len(lines) else ""
        found = pattern.search(raw + " " + following.strip())
        if found:
            value = int(next(g for g in found.groups() if g))
            if accept(value):
                return value, number if found.start() < len(raw) else lines[index + 1][0]
    return None


def parse_quality(lines):
    """(the mean Phred quality a read must reach, line)."""
    return _first(lines, QUALITY, lambda q: 0 < q < 60)


def parse_min_orf(lines):
    """(the minimum ORF length in amino acids, stop not counted, line)."""
    return _first(lines, ORF_MIN, lambda n: 10 <= n <= 2000)


def parse_table(lines):
    """(the NCBI translation table id, line)."""
    return _first(lines, TABLE, lambda t: t in SUPPORTED_TABLES)


def _required(parser, what):
    found = parser(numbered_skill_lines())
    if found is None:
        raise SystemExit(f"the skill states no {what}")
    return found[0]


def quality_threshold():
    return _required(parse_quality, "quality threshold")


def min_orf_aa():
    return _required(parse_min_orf, "minimum ORF length")


def codon_table():
    return _required(parse_table, "translation table")
