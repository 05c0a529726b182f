# --- compound library triage, another RDKit route: rdMolDescriptors throughout, the largest
# fragment picked by heavy-atom count, duplicates found by InChIKey, the SDF split by hand ---
import csv
import json
import os
import sys

from molfacts import filter_rule, stereo_policy
from rdkit import Chem, RDLogger
from rdkit.Chem import rdMolDescriptors as rd

RDLogger.DisableLog("rdApp.*")
TASK = json.loads(sys.argv[1])
RULE = filter_rule() if TASK["rule_from_skill"] else TASK["rule"]
POLICY = stereo_policy() if TASK["stereo_from_skill"] else TASK["stereo"]


def records(path):
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    if path.endswith(".csv"):
        for row in csv.DictReader(text.splitlines()):
            yield row["compound_id"], row["smiles"].strip(), None
        return
    for block in text.split("$$$$"):
        if block.strip():
            lines = block.strip("\n").split("\n")
            ident = lines[lines.index(">  <COMPOUND_ID>") + 1].strip()
            yield ident, None, block.lstrip("\n")


def largest(mol):
    return max(Chem.GetMolFrags(mol, asMols=True), key=lambda m: (m.GetNumHeavyAtoms(), rd.CalcExactMolWt(m)))


def identity(mol):
    inchikey = Chem.MolToInchiKey(mol)
    return inchikey if POLICY == "distinct" else inchikey[:14]  # the first block leaves out stereo


def limits_broken(values):
    ops = {"<=": lambda a, b: a <= b, "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, ">": lambda a, b: a > b}
    return sum(not ops[op](values[name], limit) for name, (op, limit) in RULE["thresholds"].items())


with open(TASK["queries"], encoding="utf-8") as handle:
    patterns = {name: Chem.MolFromSmarts(s) for name, s in json.load(handle).items()}
result = {"invalid": [], "compounds": {}}
owner = {}
for path in TASK["files"]:
    for ident, smiles, block in records(path):
        mol = Chem.MolFromSmiles(smiles) if smiles else Chem.MolFromMolBlock(block) if block else None
        if mol is None or mol.GetNumAtoms() == 0:
            result["invalid"].append(ident)
            continue
        mol = largest(mol)
        found = identity(mol)
        if found in owner:
            result["compounds"][owner[found]]["duplicates"].append(ident)
            continue
        owner[found] = ident
        values = {"mw": sum(atom.GetMass() for atom in Chem.AddHs(mol).GetAtoms()),  # average masses
                  "exact_mass": rd.CalcExactMolWt(mol), "logp": rd.CalcCrippenDescriptors(mol)[0],
                  "tpsa": rd.CalcTPSA(mol), "hbd": rd.CalcNumHBD(mol), "hba": rd.CalcNumHBA(mol),
                  "rotatable_bonds": rd.CalcNumRotatableBonds(mol), "rings": rd.CalcNumRings(mol)}
        broken = limits_broken(values)
        result["compounds"][ident] = {
            "smiles": Chem.MolToSmiles(mol, isomericSmiles=POLICY == "distinct"), "formula": rd.CalcMolFormula(mol),
            **{k: round(v, 4) if isinstance(v, float) else v for k, v in values.items()},
            "violations": broken, "passes": broken <= RULE["max_violations"], "duplicates": [],
            "matches": [n for n, p in patterns.items() if mol.HasSubstructMatch(p)],
        }
os.makedirs("out", exist_ok=True)
with open("out/compounds.json", "w", encoding="utf-8") as handle:
    json.dump(result, handle, indent=1)
passing = {k: v for k, v in result["compounds"].items() if v["passes"]}
with open("out/shortlist.csv", "w", encoding="utf-8", newline="") as handle:
    writer = csv.DictWriter(handle, fieldnames=["id", "smiles", "violations", "mw", "logp"], extrasaction="ignore")
    writer.writeheader()
    for ident in sorted(passing):
        writer.writerow({"id": ident, **passing[ident]})
