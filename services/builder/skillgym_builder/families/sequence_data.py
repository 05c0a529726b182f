"""The inputs of one sequence-stats instance, generated in pure Python: contigs (FASTA, wrapped,
optionally soft-masked) with planted ORFs on both strands and palindromic restriction sites in
the gaps, and a FASTQ run sampled from them with planted low-quality reads (mean quality set
exactly), malformed records and duplicated records."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

ENZYMES = {"EcoRI": "GAATTC", "BamHI": "GGATCC", "HindIII": "AAGCTT", "NotI": "GCGGCCGC", "XhoI": "CTCGAG",
           "PstI": "CTGCAG", "KpnI": "GGTACC", "NdeI": "CATATG"}
STOPS = {1: ("TAA", "TAG", "TGA"), 4: ("TAA", "TAG"), 11: ("TAA", "TAG", "TGA")}
SENSE = [a + b + c for a in "ACGT" for b in "ACGT" for c in "ACGT"]
COMPLEMENT = str.maketrans("ACGTacgt", "TGCAtgca")
MALFORMED_KINDS = ("short_quality", "bad_character")


def revcomp(seq: str) -> str:
    return seq.translate(COMPLEMENT)[::-1]


def background(rng: random.Random, length: int, gc: float) -> str:
    return "".join(rng.choice("GC") if rng.random() < gc else rng.choice("AT") for _ in range(length))


def orf(rng: random.Random, aa_length: int, table: int) -> str:
    """ATG, ``aa_length - 1`` sense codons (under ``table`` with TGA read through where it is
    sense, so the standard table would cut the ORF short) and a stop valid in every table."""
    sense = [c for c in SENSE if c not in STOPS[table] and c not in ("TAA", "TAG")]
    codons = [rng.choice(sense) for _ in range(aa_length - 1)]
    if "TGA" not in STOPS[table]:
        for at in rng.sample(range(5, aa_length - 5), 3):
            codons[at] = "TGA"
    return "ATG" + "".join(codons) + rng.choice(["TAA", "TAG"])


@dataclass
class Contig:
    id: str
    seq: str
    orfs: list[dict[str, Any]] = field(default_factory=list)  # planted: strand, end (forward coordinates), aa


def contig(rng: random.Random, name: str, table: int, min_aa: int, enzymes: list[str], noise: float) -> Contig:
    """Gap, ORF, gap, ORF, ... with sites planted in the gaps; ORFs just below, at and above the
    minimum length, on either strand."""
    gc = rng.uniform(0.3, 0.6)
    lengths = [min_aa - 3, min_aa, min_aa + rng.randint(10, 100), min_aa + rng.randint(10, 100)]
    rng.shuffle(lengths)
    parts: list[str] = []
    planted = []
    for aa in lengths:
        gap = list(background(rng, rng.randint(90, 240), gc))
        for enzyme in rng.sample(enzymes, rng.randint(0, min(2, len(enzymes)))):
            at = rng.randint(0, len(gap) - 10)
            gap[at : at + len(ENZYMES[enzyme])] = ENZYMES[enzyme]
        parts.append("".join(gap))
        start = sum(len(p) for p in parts)
        strand = rng.choice("+-")
        body = orf(rng, aa, table)
        parts.append(body if strand == "+" else revcomp(body))
        planted.append({"strand": strand, "aa": aa, "start": start + 1, "end": start + len(body)})
    parts.append(background(rng, rng.randint(60, 150), gc))
    seq = "".join(parts)
    if noise:
        chars = list(seq)
        for _ in range(int(noise * 10)):
            at = rng.randint(0, len(chars) - 80)
            chars[at : at + 60] = [c.lower() for c in chars[at : at + 60]]
        seq = "".join(chars)
    return Contig(name, seq, planted)


def fasta(records: list[tuple[str, str]], width: int = 70) -> str:
    out = []
    for name, seq in records:
        out.append(f">{name}")
        out += [seq[i : i + width] for i in range(0, len(seq), width)]
    return "\n".join(out) + "\n"


def quality(rng: random.Random, length: int, mean: int) -> str:
    """A Phred+33 string whose mean is exactly ``mean``."""
    scores = [max(2, min(41, mean + rng.randint(-6, 6))) for _ in range(length)]
    while sum(scores) != mean * length:
        i = rng.randrange(length)
        step = 1 if sum(scores) < mean * length else -1
        if 2 <= scores[i] + step <= 41:
            scores[i] += step
    return "".join(chr(33 + q) for q in scores)


@dataclass
class Run:
    text: str
    ids: list[str]
    malformed: list[str]
    duplicates: list[str]
    low_quality: list[str]


def reads(rng: random.Random, contigs: list[Contig], count: int, noise: float, threshold: int,
          malformed: int, run_name: str) -> Run:
    records: list[tuple[str, str, str]] = []
    low: list[str] = []
    for n in range(count):
        source = rng.choice(contigs).seq.upper()
        length = rng.randint(70, 100)
        at = rng.randint(0, len(source) - length)
        seq = source[at : at + length]
        seq = seq if rng.random() < 0.5 else revcomp(seq)
        ident = f"{run_name}:1:{1101 + n % 7}:{rng.randint(1000, 29999)}:{rng.randint(1000, 29999)}"
        if n < 2:  # the boundary: a mean exactly at the threshold is kept, one below is not
            mean = threshold - n
        elif rng.random() < noise:
            mean = rng.randint(max(3, threshold - 12), threshold - 1)
        else:
            mean = rng.randint(threshold + 1, min(40, threshold + 12))
        if mean < threshold:
            low.append(ident)
        records.append((ident, seq, quality(rng, length, mean)))
    rng.shuffle(records)
    broken: list[str] = []
    for i, index in enumerate(rng.sample(range(len(records)), malformed)):
        ident, seq, qual = records[index]
        if MALFORMED_KINDS[i % 2] == "short_quality":
            qual = qual[: -rng.randint(1, 5)]
        else:
            at = rng.randrange(len(seq))
            seq = seq[:at] + "." + seq[at + 1 :]
        records[index] = (ident, seq, qual)
        broken.append(ident)
    low = [i for i in low if i not in broken]
    duplicated = [r for r in rng.sample(records, 1 + count // 40) if r[0] not in broken]
    for record in duplicated:
        records.insert(rng.randint(records.index(record) + 1, len(records)), record)
    dupes = [r[0] for r in duplicated]
    text = "".join(f"@{i} 1:N:0:{run_name[-6:]}\n{s}\n+\n{q}\n" for i, s, q in records)
    return Run(text, [r[0] for r in records], broken, dupes, low)
