# --- compound library triage with RDKit: canonical SMILES, descriptors, rule filter, SMARTS ---
import csv
import json
import os
import sys

from molfacts import filter_rule, stereo_policy
from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, Descriptors, Lipinski
from rdkit.Chem.MolStandardize import rdMolStandardize

RDLogger.DisableLog("rdApp.*")
TASK = json.loads(sys.argv[1])
RULE = filter_rule() if TASK["rule_from_skill"] else TASK["rule"]
POLICY = stereo_policy() if TASK["stereo_from_skill"] else TASK["stereo"]
print(f"rule {RULE}, stereo {POLICY}")
chooser = rdMolStandardize.LargestFragmentChooser()


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            smiles = row["smiles"].strip()
            yield row["compound_id"], Chem.MolFromSmiles(smiles) if smiles else None


def read_sdf(path):
    # sanitize later so a broken record still gives its id
    for mol in Chem.SDMolSupplier(path, sanitize=False, removeHs=False):
        if mol is None:
            continue
        ident = mol.GetProp("COMPOUND_ID")
        try:
            Chem.SanitizeMol(mol)
            mol = Chem.RemoveHs(mol)
        except Exception:
            mol = None
        yield ident, mol


def describe(mol):
    props = {
        "formula": Chem.rdMolDescriptors.CalcMolFormula(mol),
        "mw": round(Descriptors.MolWt(mol), 3),
        "exact_mass": round(Descriptors.ExactMolWt(mol), 3),
        "logp": round(Crippen.MolLogP(mol), 3),
        "tpsa": round(Descriptors.TPSA(mol), 3),
        "hbd": Lipinski.NumHDonors(mol),
        "hba": Lipinski.NumHAcceptors(mol),
        "rotatable_bonds": Descriptors.NumRotatableBonds(mol),
        "rings": Descriptors.RingCount(mol),
    }
    broken = 0
    for name, (op, limit) in RULE["thresholds"].items():
        value = props[name]
        broken += not {"<=": value <= limit, "<": value < limit, ">=": value >= limit, ">": value > limit}[op]
    props["violations"] = broken
    props["passes"] = broken <= RULE["max_violations"]
    return props


with open(TASK["queries"], encoding="utf-8") as handle:
    queries = {name: Chem.MolFromSmarts(smarts) for name, smarts in json.load(handle).items()}
invalid, compounds, seen = [], {}, {}
for path in TASK["files"]:
    records = read_sdf(path) if path.endswith(".sdf") else read_csv(path)
    for ident, mol in records:
        if mol is None or mol.GetNumAtoms() == 0:
            invalid.append(ident)
            continue
        parent = chooser.choose(mol)
        key = Chem.MolToSmiles(parent, isomericSmiles=POLICY == "distinct")
        if key in seen:
            compounds[seen[key]]["duplicates"].append(ident)
            continue
        seen[key] = ident
        compounds[ident] = {"smiles": key, **describe(parent), "duplicates": [],
                            "matches": sorted(n for n, q in queries.items() if parent.HasSubstructMatch(q))}
os.makedirs("out", exist_ok=True)
with open("out/compounds.json", "w", encoding="utf-8") as handle:
    json.dump({"invalid": invalid, "compounds": compounds}, handle, indent=2)
with open("out/shortlist.csv", "w", encoding="utf-8", newline="") as handle:
    writer = csv.writer(handle)
    writer.writerow(["id", "smiles", "mw", "logp", "violations"])
    for ident, props in compounds.items():
        if props["passes"]:
            writer.writerow([ident, props["smiles"], props["mw"], props["logp"], props["violations"]])
print(f"{len(compounds)} unique compounds, {len(invalid)} invalid records")
