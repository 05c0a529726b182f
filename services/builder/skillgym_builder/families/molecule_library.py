"""The compound catalogue molecule-props libraries are drawn from (real drug-like and small
molecules, with approximate RDKit properties used only to pick instances that discriminate; the
verifier recomputes everything) and the plan of one library: which records are re-written
duplicates, salts, stereo variants and unparseable entries."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

# name|SMILES|heavy atoms|stereo (T tetrahedral, E double bond, - none)|MW logP TPSA HBD HBA RotB|substructure hits
CATALOGUE_TEXT = r"""
aspirin|CC(=O)Oc1ccccc1C(=O)O|13|-|180.2 1.31 63.6 1 3 2|carboxylic_acid ester
paracetamol|CC(=O)Nc1ccc(O)cc1|11|-|151.2 1.35 49.3 2 2 1|phenol secondary_amide
caffeine|Cn1cnc2c1c(=O)n(C)c(=O)n2C|14|-|194.2 -1.03 61.8 0 3 0|
ibuprofen|CC(C)Cc1ccc([C@@H](C)C(=O)O)cc1|15|T|206.3 3.07 37.3 1 1 4|carboxylic_acid
naproxen|COc1ccc2cc([C@H](C)C(=O)O)ccc2c1|17|T|230.3 3.04 46.5 1 2 3|carboxylic_acid
diclofenac|OC(=O)Cc1ccccc1Nc1c(Cl)cccc1Cl|19|-|296.2 4.36 49.3 2 2 4|any_halogen aryl_halide carboxylic_acid
metformin|CN(C)C(=N)NC(=N)N|9|-|129.2 -1.03 89.0 4 2 0|
nicotine|CN1CCC[C@H]1c1cccnc1|12|T|162.2 1.85 16.1 0 2 1|pyridine_like tertiary_amine
lidocaine|CCN(CC)CC(=O)Nc1c(C)cccc1C|17|-|234.3 2.58 32.3 1 2 5|secondary_amide tertiary_amine
diphenhydramine|CN(C)CCOC(c1ccccc1)c1ccccc1|19|-|255.4 3.35 12.5 0 2 6|tertiary_amine
fluoxetine|CNCCC(Oc1ccc(C(F)(F)F)cc1)c1ccccc1|22|-|309.3 4.44 21.3 1 2 6|any_halogen trifluoromethyl
sertraline|CN[C@H]1CC[C@@H](c2ccc(Cl)c(Cl)c2)c2ccccc21|20|T|306.2 5.18 12.0 1 1 2|any_halogen aryl_halide
atenolol|CC(C)NCC(O)COc1ccc(CC(N)=O)cc1|19|-|266.3 0.45 84.6 3 4 8|aliphatic_hydroxyl
propranolol|CC(C)NCC(O)COc1cccc2ccccc12|19|-|259.3 2.58 41.5 2 3 6|aliphatic_hydroxyl
salbutamol|CC(C)(C)NCC(O)c1ccc(O)c(CO)c1|17|-|239.3 1.31 72.7 4 4 4|aliphatic_hydroxyl phenol
warfarin|CC(=O)CC(c1ccccc1)c1c(O)c2ccccc2oc1=O|23|-|308.3 3.61 67.5 1 4 4|phenol
omeprazole|COc1ccc2[nH]c(S(=O)Cc3ncc(C)c(OC)c3C)nc2c1|24|-|345.4 2.9 77.1 1 5 5|aromatic_nh pyridine_like
losartan|CCCCc1nc(Cl)c(CO)n1Cc1ccc(-c2ccccc2-c2nnn[nH]2)cc1|30|-|422.9 4.27 92.5 2 5 8|aliphatic_hydroxyl any_halogen aromatic_nh aryl_halide
atorvastatin|CC(C)c1c(C(=O)Nc2ccccc2)c(-c2ccccc2)c(-c2ccc(F)cc2)n1CC[C@@H](O)C[C@@H](O)CC(=O)O|41|T|558.7 6.31 111.8 4 4 12|aliphatic_hydroxyl any_halogen aryl_halide carboxylic_acid secondary_amide
simvastatin|CCC(C)(C)C(=O)O[C@H]1C[C@@H](C)C=C2C=C[C@H](C)[C@H](CC[C@@H]3C[C@@H](O)CC(=O)O3)[C@@H]21|30|T|418.6 4.59 72.8 1 5 6|aliphatic_hydroxyl ester
ciprofloxacin|OC(=O)c1cn(C2CC2)c2cc(N3CCNCC3)c(F)cc2c1=O|24|-|331.3 1.58 74.6 2 4 3|any_halogen aryl_halide carboxylic_acid piperazine pyridine_like
amoxicillin|CC1(C)S[C@@H]2[C@H](NC(=O)[C@H](N)c3ccc(O)cc3)C(=O)N2[C@H]1C(=O)O|25|T|365.4 0.02 133.0 4 6 4|carboxylic_acid phenol primary_amine secondary_amide
sulfamethoxazole|Cc1cc(NS(=O)(=O)c2ccc(N)cc2)no1|17|-|253.3 1.37 98.2 2 5 3|sulfonamide
trimethoprim|COc1cc(Cc2cnc(N)nc2N)cc(OC)c1OC|21|-|290.3 1.26 105.5 2 7 5|
chloroquine|CCN(CC)CCCC(C)Nc1ccnc2cc(Cl)ccc12|22|-|319.9 4.81 28.2 1 3 8|any_halogen aryl_halide pyridine_like tertiary_amine
diazepam|CN1C(=O)CN=C(c2ccccc2)c2cc(Cl)ccc21|20|-|284.7 3.15 32.7 0 2 1|any_halogen aryl_halide
haloperidol|OC1(c2ccc(Cl)cc2)CCN(CCCC(=O)c2ccc(F)cc2)CC1|26|-|375.9 4.43 40.5 1 3 6|aliphatic_hydroxyl any_halogen aryl_halide aryl_ketone tertiary_amine
imatinib|Cc1ccc(NC(=O)c2ccc(CN3CCN(C)CC3)cc2)cc1Nc1nccc(-c2cccnc2)n1|37|-|493.6 4.59 86.3 2 7 7|piperazine pyridine_like secondary_amide tertiary_amine
sildenafil|CCCc1nn(C)c2c(=O)[nH]c(-c3cc(S(=O)(=O)N4CCN(C)CC4)ccc3OCC)nc12|33|-|474.6 1.61 113.4 1 7 7|aromatic_nh piperazine sulfonamide tertiary_amine
tamoxifen|CC/C(=C(\c1ccccc1)c1ccc(OCCN(C)C)cc1)c1ccccc1|28|E|371.5 6.0 12.5 0 2 8|tertiary_amine
celecoxib|Cc1ccc(-c2cc(C(F)(F)F)nn2-c2ccc(S(N)(=O)=O)cc2)cc1|26|-|381.4 3.51 78.0 1 3 3|any_halogen sulfonamide trifluoromethyl
furosemide|NS(=O)(=O)c1cc(C(=O)O)c(NCc2ccco2)cc1Cl|21|-|330.7 1.89 122.6 3 5 5|any_halogen aryl_halide carboxylic_acid sulfonamide
hydrochlorothiazide|NS(=O)(=O)c1cc2c(cc1Cl)NCNS2(=O)=O|17|-|297.7 -0.35 118.4 3 5 1|any_halogen aryl_halide sulfonamide
verapamil|COc1ccc(CCN(C)CCCC(C#N)(C(C)C)c2ccc(OC)c(OC)c2)cc1OC|33|-|454.6 5.09 64.0 0 6 13|tertiary_amine
amlodipine|CCOC(=O)C1=C(COCCN)NC(C)=C(C(=O)OC)C1c1ccccc1Cl|28|-|408.9 2.27 99.9 2 7 8|any_halogen aryl_halide ester primary_amine
metoprolol|COCCc1ccc(OCC(O)CNC(C)C)cc1|19|-|267.4 1.61 50.7 2 4 9|aliphatic_hydroxyl
ketoprofen|CC(C(=O)O)c1cccc(C(=O)c2ccccc2)c1|19|-|254.3 3.11 54.4 1 2 4|aryl_ketone carboxylic_acid
indomethacin|COc1ccc2c(c1)c(CC(=O)O)c(C)n2C(=O)c1ccc(Cl)cc1|25|-|357.8 3.93 68.5 1 3 4|any_halogen aryl_halide carboxylic_acid
quinine|COc1ccc2nccc([C@@H](O)[C@@H]3C[C@@H]4CCN3C[C@@H]4C=C)c2c1|24|T|324.4 3.17 45.6 1 4 4|aliphatic_hydroxyl pyridine_like tertiary_amine
morphine|CN1CC[C@]23c4c5ccc(O)c4O[C@H]2[C@@H](O)C=C[C@H]3[C@H]1C5|21|T|285.3 1.2 52.9 2 4 0|aliphatic_hydroxyl phenol tertiary_amine
codeine|COc1ccc2C[C@H]3N(C)CC[C@@]45[C@@H](Oc1c24)[C@@H](O)C=C[C@@H]35|22|T|299.4 1.5 41.9 1 4 1|aliphatic_hydroxyl tertiary_amine
ephedrine|CN[C@@H](C)[C@H](O)c1ccccc1|12|T|165.2 1.33 32.3 2 2 3|aliphatic_hydroxyl
menthol|CC(C)[C@@H]1CC[C@@H](C)C[C@H]1O|11|T|156.3 2.44 20.2 1 1 1|aliphatic_hydroxyl
L-dopa|N[C@@H](Cc1ccc(O)c(O)c1)C(=O)O|14|T|197.2 0.05 103.8 4 4 3|carboxylic_acid phenol primary_amine
dopamine|NCCc1ccc(O)c(O)c1|11|-|153.2 0.6 66.5 3 3 2|phenol primary_amine
serotonin|NCCc1c[nH]c2ccc(O)cc12|13|-|176.2 1.37 62.0 3 2 2|aromatic_nh phenol primary_amine
melatonin|COc1ccc2[nH]cc(CCNC(C)=O)c2c1|17|-|232.3 1.86 54.1 2 2 4|aromatic_nh secondary_amide
benzocaine|CCOC(=O)c1ccc(N)cc1|12|-|165.2 1.45 52.3 1 3 2|ester
procaine|CCN(CC)CCOC(=O)c1ccc(N)cc1|17|-|236.3 1.77 55.6 1 4 6|ester tertiary_amine
phenytoin|O=C1NC(=O)C(c2ccccc2)(c2ccccc2)N1|19|-|252.3 1.77 58.2 2 2 2|secondary_amide
carbamazepine|NC(=O)N1c2ccccc2C=Cc2ccccc21|18|-|236.3 3.39 46.3 1 1 0|
gabapentin|NCC1(CC(=O)O)CCCCC1|12|-|171.2 1.37 63.3 2 2 3|carboxylic_acid primary_amine
valproic acid|CCCC(CCC)C(=O)O|10|-|144.2 2.29 37.3 1 1 5|carboxylic_acid
acyclovir|Nc1nc2n(COCCO)cnc2c(=O)[nH]1|16|-|225.2 -1.33 119.0 3 6 4|aliphatic_hydroxyl aromatic_nh
zidovudine|Cc1cn([C@H]2C[C@H](N=[N+]=[N-])[C@@H](CO)O2)c(=O)[nH]c1=O|19|T|267.2 -0.2 133.1 2 5 3|aliphatic_hydroxyl aromatic_nh
clopidogrel|COC(=O)[C@H](c1ccccc1Cl)N1CCc2sccc2C1|21|T|321.8 3.67 29.5 0 4 3|any_halogen aryl_halide ester tertiary_amine
cetirizine|OC(=O)COCCN1CCN(C(c2ccccc2)c2ccc(Cl)cc2)CC1|27|-|388.9 3.15 53.0 1 4 8|any_halogen aryl_halide carboxylic_acid piperazine tertiary_amine
loratadine|CCOC(=O)N1CCC(=C2c3ccc(Cl)cc3CCc3cccnc32)CC1|27|-|382.9 4.89 42.4 0 3 1|any_halogen aryl_halide pyridine_like
ranitidine|CNC(=C[N+](=O)[O-])NCCSCc1ccc(CN(C)C)o1|21|-|314.4 1.46 83.6 2 7 10|nitro tertiary_amine
nitrofurantoin|O=C1CN(/N=C/c2ccc([N+](=O)[O-])o2)C(=O)N1|17|E|238.2 0.07 118.1 1 6 3|nitro secondary_amide
metronidazole|Cc1ncc([N+](=O)[O-])n1CCO|12|-|171.2 0.09 81.2 1 4 3|aliphatic_hydroxyl nitro
theophylline|Cn1c(=O)c2[nH]cnc2n(C)c1=O|13|-|180.2 -1.04 72.7 1 3 0|aromatic_nh
captopril|C[C@H](CS)C(=O)N1CCC[C@H]1C(=O)O|14|T|217.3 0.63 57.6 2 3 3|carboxylic_acid
enalapril|CCOC(=O)[C@H](CCc1ccccc1)N[C@@H](C)C(=O)N1CCC[C@H]1C(=O)O|27|T|376.5 1.6 95.9 2 5 9|carboxylic_acid ester
tolbutamide|CCCCNC(=O)NS(=O)(=O)c1ccc(C)cc1|18|-|270.4 1.78 75.3 2 3 5|secondary_amide sulfonamide
glibenclamide|COc1ccc(Cl)cc1C(=O)NCCc1ccc(S(=O)(=O)NC(=O)NC2CCCCC2)cc1|33|-|494.0 3.64 113.6 3 5 8|any_halogen aryl_halide secondary_amide sulfonamide
levetiracetam|CC[C@@H](C(N)=O)N1CCCC1=O|12|T|170.2 -0.13 63.4 1 2 3|
pregabalin|CC(C)C[C@H](CN)CC(=O)O|11|T|159.2 1.08 63.3 2 2 5|carboxylic_acid primary_amine
vanillin|COc1cc(C=O)ccc1O|11|-|152.1 1.21 46.5 1 3 2|phenol
cinnamic acid|OC(=O)/C=C/c1ccccc1|11|E|148.2 1.78 37.3 1 1 2|carboxylic_acid
estradiol|C[C@]12CC[C@@H]3c4ccc(O)cc4CC[C@H]3[C@@H]1CC[C@@H]2O|20|T|272.4 3.61 40.5 2 2 0|aliphatic_hydroxyl phenol
testosterone|C[C@]12CC[C@H]3[C@@H](CCC4=CC(=O)CC[C@@]43C)[C@@H]1CC[C@@H]2O|21|T|288.4 3.88 37.3 1 2 0|aliphatic_hydroxyl
"""

QUERIES = {
    "carboxylic_acid": "[CX3](=O)[OX2H1]",
    "phenol": "c[OX2H]",
    "aryl_halide": "c[F,Cl,Br,I]",
    "any_halogen": "[F,Cl,Br,I]",
    "primary_amine": "[NX3;H2;!$(NC=[O,S,N]);!$(Na)][CX4]",
    "secondary_amide": "[CX3](=O)[NX3;H1][#6]",
    "sulfonamide": "[SX4](=O)(=O)[NX3]",
    "ester": "[#6][CX3](=O)[OX2][#6]",
    "nitro": "[N+](=O)[O-]",
    "tertiary_amine": "[NX3;H0;!$(NC=[O,S,N]);!$(N-a);!$(N-[SX4])]([#6])([#6])[#6]",
    "aliphatic_hydroxyl": "[CX4][OX2H]",
    "pyridine_like": "n1ccccc1",
    "aromatic_nh": "[nH]",
    "piperazine": "N1CCNCC1",
}
# neutral counter-ion and solvent fragments, all far smaller than any parent they are paired with
COUNTERIONS = ["Cl", "Br", "O", "CS(=O)(=O)O", "OC(=O)C(=O)O", "OS(=O)(=O)O", r"OC(=O)/C=C\C(=O)O"]
SALT_MIN_HEAVY = 12
PROPS = ("mw", "logp", "tpsa", "hbd", "hba", "rotatable_bonds")
RO5: dict[str, Any] = {"thresholds": {"mw": ["<=", 500], "logp": ["<=", 5], "hbd": ["<=", 5], "hba": ["<=", 10]}, "max_violations": 1}
INVALID_KINDS = ("unclosed_ring", "unbalanced_branch", "bad_valence", "unknown_atom")
SUPPLIERS = ["Enamine", "ChemDiv", "Sigma", "in-house", "Maybridge"]


@dataclass(frozen=True)
class Molecule:
    name: str
    smiles: str
    heavy: int
    stereo: str
    props: dict[str, float]
    hits: frozenset[str]


def _catalogue() -> list[Molecule]:
    out = []
    for line in CATALOGUE_TEXT.strip().splitlines():
        name, smiles, heavy, stereo, props, hits = line.split("|")
        values = [float(v) for v in props.split()]
        out.append(Molecule(name, smiles, int(heavy), stereo, dict(zip(PROPS, values, strict=True)),
                            frozenset(hits.split())))
    return out


CATALOGUE = _catalogue()


def violations(props: dict[str, float], rule: dict[str, Any]) -> int:
    count = 0
    for name, (op, limit) in rule["thresholds"].items():
        value = props[name]
        ok = {"<=": value <= limit, "<": value < limit, ">=": value >= limit, ">": value > limit}[op]
        count += not ok
    return count


def passes(molecule: Molecule, rule: dict[str, Any]) -> bool:
    return violations(molecule.props, rule) <= rule["max_violations"]


def inverted(smiles: str) -> str:
    """Every tetrahedral centre inverted: the enantiomer (no catalogue entry is meso)."""
    return re.sub(r"@@?", lambda m: "@" if m.group() == "@@" else "@@", smiles)


def flattened(smiles: str) -> str:
    """The same constitution with its stereo left undefined."""
    return smiles.replace("@", "").replace("/", "").replace("\\", "")


def corrupted(smiles: str, kind: str) -> str:
    """A SMILES no toolkit accepts, made from a real one (the render step checks each fails)."""
    if kind == "unclosed_ring":
        first = re.match(r"Cl|Br|\[[^\]]+\]|[A-Za-z]", smiles)
        assert first is not None
        return smiles[: first.end()] + "9" + smiles[first.end() :]
    if kind == "unbalanced_branch" and ")" in smiles:
        cut = smiles.rindex(")")
        return smiles[:cut] + smiles[cut + 1 :]
    if kind == "bad_valence" and "=O" in smiles:
        return smiles.replace("=O", "=F", 1)
    at = len(smiles) // 2
    return smiles[:at] + "[Xq]" + smiles[at:]


@dataclass
class Entry:
    """One record of the library as planned; the render step writes it in its ``writing``."""

    smiles: str
    writing: str  # as_is, random, kekule, explicit_h; invalid: raw (CSV text) or bad_atom (SDF block)
    parent: int | None  # catalogue index; None for an invalid record
    stereo: str = "orig"  # orig, inverted, flat
    salt: bool = False
    role: str = "main"  # main, duplicate, salt, stereo, invalid
    file: str = ""
    id: str = ""
    seed: int = 0


@dataclass
class Library:
    parents: list[int]
    entries: list[Entry]
    queries: dict[str, str]
    archive: list[Entry] = field(default_factory=list)

    def identity(self, entry: Entry, policy: str) -> str:
        assert entry.parent is not None
        return str(entry.parent) if policy == "collapse" else f"{entry.parent}:{entry.stereo}"

    def groups(self, policy: str) -> dict[str, list[str]]:
        """Representative id (the first record of each molecule in file order) to its duplicates."""
        first: dict[str, str] = {}
        out: dict[str, list[str]] = {}
        for entry in self.entries:
            if entry.parent is None:
                continue
            key = self.identity(entry, policy)
            if key in first:
                out[first[key]].append(entry.id)
            else:
                first[key] = entry.id
                out[entry.id] = []
        return out

    def invalid(self) -> list[str]:
        return [e.id for e in self.entries if e.parent is None]


def _pick_parents(rng: random.Random, count: int, rule: dict[str, Any], salts: int, stereo: int) -> list[int]:
    order = list(range(len(CATALOGUE)))
    rng.shuffle(order)
    chosen: list[int] = []

    def take(test: Callable[[Molecule], bool], wanted: int) -> None:
        for index in order:
            if len([i for i in chosen if test(CATALOGUE[i])]) >= wanted:
                return
            if index not in chosen and test(CATALOGUE[index]):
                chosen.append(index)

    take(lambda m: m.stereo != "-", stereo)
    take(lambda m: m.heavy >= SALT_MIN_HEAVY and m.stereo == "-", salts)
    if rule != RO5:
        take(lambda m: passes(m, rule) != passes(m, RO5), 2)
    take(lambda m: True, count)
    return chosen[:count] if len(chosen) > count else chosen


def _queries(rng: random.Random, parents: list[int], count: int, salted: bool) -> dict[str, str]:
    """Queries that hit some parents and miss others; the halogen query whenever a salt carries
    a halide (a match on the counter-ion is the trap)."""
    useful = [q for q in QUERIES if 0 < sum(q in CATALOGUE[i].hits for i in parents) < len(parents)]
    rng.shuffle(useful)
    names = (["any_halogen"] if salted and "any_halogen" in useful else []) + useful
    return {name: QUERIES[name] for name in sorted(dict.fromkeys(names[:count]))}


def plan_library(rng: random.Random, values: dict[str, float], rule: dict[str, Any]) -> Library:
    count, noise = int(values["record_count"]), float(values["noise_level"])
    salts = 1 + round(count * noise * 0.3)
    stereo = 1 + round(noise * 4)
    duplicates = 2 + round(count * noise * 0.3)
    parents = _pick_parents(rng, count, rule, salts, stereo)
    salted = sorted((i for i in parents if CATALOGUE[i].heavy >= SALT_MIN_HEAVY and CATALOGUE[i].stereo == "-"),
                    key=lambda i: "any_halogen" in CATALOGUE[i].hits)[:salts]
    entries = []
    for index in parents:
        smiles = CATALOGUE[index].smiles
        writing = "random" if rng.random() < noise else "as_is"
        if index in salted:
            ions = [rng.choice(COUNTERIONS[:2])] if index == salted[0] else rng.sample(COUNTERIONS, rng.randint(1, 2))
            fragments = [smiles, *ions]
            rng.shuffle(fragments)
            entries.append(Entry(".".join(fragments), writing, index, salt=True, role="salt"))
        else:
            entries.append(Entry(smiles, writing, index))
    for index in rng.sample(parents, min(duplicates, len(parents))):
        entries.append(Entry(CATALOGUE[index].smiles, rng.choice(["random", "kekule", "explicit_h"]), index,
                             role="duplicate"))
    chiral = [i for i in parents if CATALOGUE[i].stereo != "-"]
    for index in rng.sample(chiral, min(stereo, len(chiral))):
        smiles = CATALOGUE[index].smiles
        kind = "inverted" if CATALOGUE[index].stereo == "T" and rng.random() < 0.5 else "flat"
        entries.append(Entry(inverted(smiles) if kind == "inverted" else flattened(smiles),
                             rng.choice(["as_is", "random"]), index, stereo=kind, role="stereo"))
    others = [i for i in range(len(CATALOGUE)) if i not in parents]
    for n, index in enumerate(rng.sample(others, int(values["error_recovery"]))):
        entries.append(Entry(CATALOGUE[index].smiles, INVALID_KINDS[n % len(INVALID_KINDS)], None, role="invalid"))
    rng.shuffle(entries)
    _place(rng, entries, two_files=values["long_horizon"] >= 2)
    library = Library(parents, entries, _queries(rng, parents, int(values["multi_step"]), bool(salted)))
    if values["distractor_files"]:
        old = rng.sample(range(len(CATALOGUE)), 8)
        library.archive = [Entry(CATALOGUE[i].smiles, "as_is", i, id=f"CMP-{40 + n:05d}", seed=rng.randrange(10**6))
                           for n, i in enumerate(old)]
    return library


def _place(rng: random.Random, entries: list[Entry], two_files: bool) -> None:
    """Files and ids: a second vendor's SDF takes a share of the main and duplicate records (and
    one invalid block) when asked; ids rise in file order."""
    csv_start, sdf_start = rng.randint(100, 4000), rng.randint(100, 900)
    movable = [e for e in entries if e.role in ("main", "duplicate", "invalid")] if two_files else []
    to_sdf = {id(e) for e in movable[len(movable) * 2 // 3 :]}
    csv_n = sdf_n = 0
    for entry in entries:
        entry.seed = rng.randrange(10**6)
        if id(entry) in to_sdf:
            sdf_n += 1
            entry.file, entry.id = "library/vendor_b.sdf", f"VB-{sdf_start + sdf_n:04d}"
            if entry.parent is None:
                entry.writing = "bad_atom"
        elif entry.parent is None:
            csv_n += 1
            entry.file, entry.id = "library/compounds.csv", f"CMP-{csv_start + 7 * csv_n:05d}"
            entry.smiles, entry.writing = corrupted(entry.smiles, entry.writing), "raw"
        else:
            csv_n += 1
            entry.file, entry.id = "library/compounds.csv", f"CMP-{csv_start + 7 * csv_n:05d}"
    entries.sort(key=lambda e: (e.file != "library/compounds.csv", e.id))
