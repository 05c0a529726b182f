# --- run summary with Biopython: FASTQ QC, contig GC, restriction sites, six-frame ORFs ---
import csv
import io
import json
import os
import re
import sys

from Bio import SeqIO
from Bio.Seq import Seq
from Bio.SeqUtils import gc_fraction
from seqfacts import codon_table, min_orf_aa, quality_threshold

TASK = json.loads(sys.argv[1])
RULES = dict(TASK["rules"])
for name, reader in (("quality", quality_threshold), ("min_orf_aa", min_orf_aa), ("table", codon_table)):
    if name in TASK["from_skill"]:
        RULES[name] = reader()
print(f"rules {RULES}")

with open(TASK["enzymes"], encoding="utf-8") as handle:
    enzymes = dict(line.split() for line in handle if line.strip())

# FASTQ records are four lines; a malformed one must not stop the parser, so parse each alone
with open(TASK["reads"], encoding="utf-8") as handle:
    lines = handle.read().splitlines()
reads = {"total": 0, "malformed": [], "duplicates": [], "low_quality": []}
seen, kept = set(), []
for at in range(0, len(lines) - 3, 4):
    ident = lines[at][1:].split()[0]
    reads["total"] += 1
    try:
        record = SeqIO.read(io.StringIO("\n".join(lines[at : at + 4]) + "\n"), "fastq")
        assert re.fullmatch(r"[ACGTN]+", str(record.seq))
    except (ValueError, AssertionError):
        reads["malformed"].append(ident)
        continue
    if ident in seen:
        reads["duplicates"].append(ident)
        continue
    seen.add(ident)
    phred = record.letter_annotations["phred_quality"]
    if sum(phred) / len(phred) < RULES["quality"]:
        reads["low_quality"].append(ident)
    else:
        kept.append(str(record.seq))
reads["kept"] = len(kept)
reads["kept_gc"] = round(gc_fraction(Seq("".join(kept))), 5)


def find_orfs(seq):
    n = len(seq)
    for strand, nuc in (("+", seq), ("-", seq.reverse_complement())):
        for frame in range(3):
            protein = str(nuc[frame : frame + 3 * ((n - frame) // 3)].translate(table=RULES["table"]))
            pos = 0
            for piece in protein.split("*")[:-1]:
                m = piece.find("M")
                if m >= 0 and len(piece) - m >= RULES["min_orf_aa"]:
                    begin, stop = frame + 3 * (pos + m), frame + 3 * (pos + len(piece) + 1)
                    start, end = (begin + 1, stop) if strand == "+" else (n - stop + 1, n - begin)
                    yield strand, start, end, piece[m:]
                pos += len(piece) + 1


contigs, rows = {}, []
for record in SeqIO.parse(TASK["contigs"], "fasta"):
    seq = record.seq.upper()
    text = str(seq)
    contigs[record.id] = {
        "length": len(seq), "gc": round(gc_fraction(seq), 5),
        "sites": {name: [m.start() + 1 for m in re.finditer(f"(?={site})", text)] for name, site in enzymes.items()},
    }
    rows += [(record.id, *orf) for orf in find_orfs(seq)]
os.makedirs("out", exist_ok=True)
with open("out/summary.json", "w", encoding="utf-8") as handle:
    json.dump({"reads": reads, "contigs": contigs}, handle, indent=2)
with open("out/orfs.tsv", "w", encoding="utf-8", newline="") as handle:
    writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
    writer.writerow(["contig", "strand", "start", "end", "aa_length", "protein"])
    for contig, strand, start, end, protein in rows:
        writer.writerow([contig, strand, start, end, len(protein), protein])
print(f"{reads['kept']} reads kept, {len(rows)} ORFs")
