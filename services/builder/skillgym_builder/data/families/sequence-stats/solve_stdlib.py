# --- run summary with the standard library only: own FASTA/FASTQ readers, NCBI codon tables
# built from their published amino-acid strings, a codon-by-codon six-frame scan ---
import json
import os
import sys

from seqfacts import codon_table, min_orf_aa, quality_threshold

TASK = json.loads(sys.argv[1])
RULES = dict(TASK["rules"])
for name, reader in (("quality", quality_threshold), ("min_orf_aa", min_orf_aa), ("table", codon_table)):
    if name in TASK["from_skill"]:
        RULES[name] = reader()
AMINO = {1: "FFLLSSSSYY**CC*WLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG",
         4: "FFLLSSSSYY**CCWWLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG",
         11: "FFLLSSSSYY**CC*WLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG"}
CODONS = dict(zip((a + b + c for a in "TCAG" for b in "TCAG" for c in "TCAG"), AMINO[RULES["table"]], strict=True))
PAIRS = str.maketrans("ACGT", "TGCA")


def gc(text):
    return (text.count("G") + text.count("C")) / len(text) if text else 0.0


def fastq(path):
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    for at in range(0, len(lines) - 3, 4):
        yield lines[at][1:].split()[0], lines[at + 1].strip(), lines[at + 3].strip()


summary = {"total": 0, "malformed": [], "duplicates": [], "low_quality": []}
seen, kept = set(), []
for ident, seq, qual in fastq(TASK["reads"]):
    summary["total"] += 1
    if len(seq) != len(qual) or not seq or set(seq) - set("ACGTN"):
        summary["malformed"].append(ident)
    elif ident in seen:
        summary["duplicates"].append(ident)
    else:
        seen.add(ident)
        if sum(ord(c) - 33 for c in qual) / len(qual) < RULES["quality"]:
            summary["low_quality"].append(ident)
        else:
            kept.append(seq)
summary["kept"], summary["kept_gc"] = len(kept), round(gc("".join(kept)), 6)

contigs, name = {}, None
with open(TASK["contigs"], encoding="utf-8") as handle:
    for line in handle:
        if line.startswith(">"):
            name = line[1:].split()[0]
            contigs[name] = []
        elif name:
            contigs[name].append(line.strip().upper())
enzymes = {}
with open(TASK["enzymes"], encoding="utf-8") as handle:
    for line in handle:
        if line.strip():
            enzyme, site = line.split()
            enzymes[enzyme] = site

report, table = {}, []
for name, parts in contigs.items():
    seq = "".join(parts)
    n = len(seq)
    report[name] = {"length": n, "gc": round(gc(seq), 6),
                    "sites": {e: [i + 1 for i in range(n) if seq.startswith(s, i)] for e, s in enzymes.items()}}
    for strand, strand_seq in (("+", seq), ("-", seq.translate(PAIRS)[::-1])):
        for frame in range(3):
            start = None
            for i in range(frame, n - 2, 3):
                amino = CODONS[strand_seq[i : i + 3]]
                if amino == "*":
                    if start is not None and (i - start) // 3 >= RULES["min_orf_aa"]:
                        protein = "".join(CODONS[strand_seq[j : j + 3]] for j in range(start, i, 3))
                        lo, hi = (start + 1, i + 3) if strand == "+" else (n - i - 2, n - start)
                        table.append("\t".join(map(str, (name, strand, lo, hi, len(protein), protein))))
                    start = None
                elif start is None and strand_seq[i : i + 3] == "ATG":
                    start = i
os.makedirs("out", exist_ok=True)
with open("out/summary.json", "w", encoding="utf-8") as handle:
    json.dump({"reads": summary, "contigs": report}, handle)
with open("out/orfs.tsv", "w", encoding="utf-8") as handle:
    handle.write("contig\tstrand\tstart\tend\taa_length\tprotein\n" + "".join(row + "\n" for row in table))
