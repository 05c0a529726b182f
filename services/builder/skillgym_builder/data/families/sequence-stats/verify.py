"""Verifier for sequence-stats: the run is re-read with Biopython from the protected inputs and
every expected value recomputed (malformed, duplicate and low-quality reads, kept GC, contig GC,
restriction sites, ORFs in six frames translated with the instance's codon table); the planted
structure in expected.json must agree with the recomputation, else the checker is broken. The
agent's files are read bounded and parsed as data only."""

import csv
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from Bio import SeqIO
from Bio.Seq import Seq
from Bio.SeqUtils import gc_fraction
from checks import app_path, close, exact_int, load_expected, run

E = load_expected()
RULES = E["rules"]
MAX_BYTES = 4 * 1024 * 1024
TOL = 0.0002
BASES = re.compile(r"^[ACGTN]+$")


def bounded_text(rel):
    with open(app_path(rel), "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{rel} is too large")
    return data.decode("utf-8")


def read_run():
    with open(app_path("data/run/reads.fastq"), encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    total, seen, malformed, duplicates, low, kept = 0, set(), [], [], [], []
    for at in range(0, len(lines) - 3, 4):
        chunk = "\n".join(lines[at : at + 4]) + "\n"
        ident = lines[at][1:].split()[0]
        total += 1
        try:
            record = SeqIO.read(io.StringIO(chunk), "fastq")
            if not BASES.match(str(record.seq)):
                raise ValueError("not a nucleotide sequence")
        except ValueError:
            malformed.append(ident)
            continue
        if ident in seen:
            duplicates.append(ident)
            continue
        seen.add(ident)
        scores = record.letter_annotations["phred_quality"]
        if sum(scores) / len(scores) < RULES["quality"]:
            low.append(ident)
        else:
            kept.append(str(record.seq))
    return {"total": total, "malformed": malformed, "duplicates": duplicates, "low_quality": low,
            "kept": len(kept), "kept_gc": gc_fraction(Seq("".join(kept)))}


def orfs(name, seq):
    found = []
    length = len(seq)
    for strand, nuc in (("+", seq), ("-", seq.reverse_complement())):
        for frame in range(3):
            usable = frame + 3 * ((length - frame) // 3)
            protein = str(nuc[frame:usable].translate(table=RULES["table"]))
            offset = 0
            for stretch in protein.split("*")[:-1]:  # the last stretch has no stop
                start = stretch.find("M")
                if start >= 0 and len(stretch) - start >= RULES["min_orf_aa"]:
                    lo = frame + 3 * (offset + start)
                    hi = frame + 3 * (offset + len(stretch)) + 3
                    span = (lo + 1, hi) if strand == "+" else (length - hi + 1, length - lo)
                    found.append((name, strand, span[0], span[1], stretch[start:]))
                offset += len(stretch) + 1
    return found


def read_contigs():
    contigs, table = {}, []
    with open(app_path("data/run/contigs.fasta"), encoding="utf-8") as handle:
        for record in SeqIO.parse(handle, "fasta"):
            seq = record.seq.upper()
            text = str(seq)
            sites = {name: [i + 1 for i in range(len(text)) if text.startswith(site, i)]
                     for name, site in E["enzymes"].items()}
            contigs[record.id] = {"length": len(seq), "gc": gc_fraction(seq), "sites": sites}
            table += orfs(record.id, seq)
    return contigs, table


READS = read_run()
CONTIGS, ORFS = read_contigs()
PLANTED = E["planted"]
ends = {(o[0], o[1], o[3] if o[1] == "+" else o[2]) for o in ORFS}
if (sorted(READS["malformed"]) != sorted(PLANTED["malformed"])
        or sorted(READS["duplicates"]) != sorted(PLANTED["duplicates"])
        or sorted(READS["low_quality"]) != sorted(PLANTED["low_quality"])
        or not all((name, o["strand"], o["end"] if o["strand"] == "+" else o["start"]) in ends
                   for name, planted in PLANTED["orfs"].items() for o in planted)):
    sys.exit("checker error: the recomputed run disagrees with the planted one")


def summary():
    data = json.loads(bounded_text("out/summary.json"))
    if not isinstance(data, dict) or not isinstance(data.get("reads"), dict) or not isinstance(data.get("contigs"), dict):
        raise TypeError("summary.json needs reads and contigs objects")
    return data


def id_set(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or len(set(value)) != len(value):
        raise ValueError("expected a list of distinct ids")
    return set(value)


def read_filter():
    got = summary()["reads"]
    return (exact_int(got["total"], READS["total"]) and id_set(got["malformed"]) == set(READS["malformed"])
            and id_set(got["duplicates"]) == set(READS["duplicates"])
            and id_set(got["low_quality"]) == set(READS["low_quality"]))


def read_stats():
    got = summary()["reads"]
    return exact_int(got["kept"], READS["kept"]) and close(got["kept_gc"], READS["kept_gc"], rel=0, abs_tol=TOL)


def contig_stats():
    got = summary()["contigs"]
    if set(got) != set(CONTIGS):
        return False
    for name, want in CONTIGS.items():
        mine = got[name]
        if not (exact_int(mine["length"], want["length"]) and close(mine["gc"], want["gc"], rel=0, abs_tol=TOL)):
            return False
        sites = mine["sites"]
        if not isinstance(sites, dict) or set(sites) != set(want["sites"]):
            return False
        for enzyme, positions in want["sites"].items():
            listed = sites[enzyme]
            if not isinstance(listed, list) or len(listed) != len(positions) or \
                    sorted(int(p) if isinstance(p, int) and not isinstance(p, bool) else -1 for p in listed) != positions:
                return False
    return True


def orf_rows():
    rows = list(csv.DictReader(io.StringIO(bounded_text("out/orfs.tsv")), delimiter="\t"))
    got = []
    for row in rows:
        aa = float(row["aa_length"])
        protein = row["protein"].strip().upper()
        if aa != len(protein):
            raise ValueError("aa_length is not the protein's length")
        start, end = float(row["start"]), float(row["end"])
        if start != int(start) or end != int(end):
            raise ValueError("positions must be whole numbers")
        got.append((row["contig"].strip(), row["strand"].strip(), int(start), int(end), protein))
    return got


def orf_calls():
    """The ORFs as located (contig, strand, span); the share found, none extra."""
    got = orf_rows()
    want = {o[:4] for o in ORFS}
    mine = [o[:4] for o in got]
    if len(set(mine)) != len(mine) or not set(mine) <= want:
        return 0.0
    return len(set(mine)) / len(want) if want else 1.0


def translations():
    got = {o[:4]: o[4] for o in orf_rows()}
    return all(got.get(o[:4]) == o[4] for o in ORFS)


run([("read_filter", read_filter), ("read_stats", read_stats), ("contig_stats", contig_stats),
     ("orf_calls", orf_calls), ("translations", translations)])
