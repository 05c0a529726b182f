"""Writes one compound library (CSV and, when asked, a vendor SDF) with RDKit, run in the sandbox,
and checks every planted property holds: invalid records do not parse, re-written duplicates
and salts give their parent's canonical SMILES, stereo variants differ only in stereo."""

import csv
import io
import json
import os
import sys

from rdkit import Chem, RDLogger
from rdkit.Chem import rdDepictor
from rdkit.Chem.MolStandardize import rdMolStandardize

RDLogger.DisableLog("rdApp.*")
CHOOSER = rdMolStandardize.LargestFragmentChooser()


def parse(smiles):
    mol = Chem.MolFromSmiles(smiles)
    if mol is None:
        raise SystemExit(f"a catalogue SMILES does not parse: {smiles}")
    return mol


def smiles_text(record):
    writing, smiles = record["writing"], record["smiles"]
    if writing in ("raw", "as_is"):
        return smiles
    mol = parse(smiles)
    if writing == "random":
        return Chem.MolToRandomSmilesVect(mol, 1, randomSeed=record["seed"])[0]
    if writing == "kekule":
        Chem.Kekulize(mol, clearAromaticFlags=True)
        return Chem.MolToSmiles(mol, kekuleSmiles=True, canonical=False)
    if writing == "explicit_h":
        return Chem.MolToSmiles(Chem.AddHs(mol))
    raise SystemExit(f"unknown writing {writing}")


def mol_block(record):
    mol = parse(record["smiles"])
    rdDepictor.Compute2DCoords(mol)
    lines = Chem.MolToMolBlock(mol).splitlines()
    lines[0] = record["id"]
    if record["writing"] == "bad_atom":  # an atom with two or more bonds turned into fluorine
        atom = next(a for a in mol.GetAtoms() if a.GetDegree() >= 2)
        row = 4 + atom.GetIdx()
        lines[row] = lines[row][:31] + "F  " + lines[row][34:]
    props = [("COMPOUND_ID", record["id"]), ("SUPPLIER", record["supplier"])]
    return "\n".join(lines + [item for k, v in props for item in (f">  <{k}>", v, "")]) + "\n$$$$\n"


def read_back(fmt, text):
    mol = Chem.MolFromSmiles(text) if fmt == "csv" else Chem.MolFromMolBlock(text)
    return None if mol is None or mol.GetNumAtoms() == 0 else CHOOSER.choose(mol)


def check(written, checks):
    """Every planted property, recomputed: raises when the plan and RDKit disagree."""
    seen = {}
    for item in checks:
        fmt, text = written[item["id"]]
        mol = read_back(fmt, text)
        if item["parent"] is None:
            if mol is not None:
                raise SystemExit(f"{item['id']} was planted invalid but parses: {text[:80]}")
            continue
        if mol is None:
            raise SystemExit(f"{item['id']} does not parse: {text[:80]}")
        flat, iso = Chem.MolToSmiles(mol, isomericSmiles=False), Chem.MolToSmiles(mol)
        seen[item["id"]] = (item["parent"], item["stereo"], flat, iso)
    values = list(seen.items())
    for i, (a, (pa, sa, fa, ia)) in enumerate(values):
        for b, (pb, sb, fb, ib) in values[i + 1:]:
            if (pa == pb) != (fa == fb) or ((pa, sa) == (pb, sb)) != (ia == ib):
                raise SystemExit(f"{a} and {b} break the planted duplicate structure")


def main():
    params_path, out_dir = sys.argv[1], sys.argv[2]
    with open(params_path, encoding="utf-8") as handle:
        params = json.load(handle)
    written = {}
    for spec in params["files"]:
        path = os.path.join(out_dir, spec["path"])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if spec["format"] == "csv":
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(["compound_id", "smiles", "supplier", "batch"])
            for record in spec["records"]:
                text = smiles_text(record)
                written[record["id"]] = ("csv", text)
                writer.writerow([record["id"], text, record["supplier"], record["batch"]])
            data = buffer.getvalue()
        else:
            blocks = []
            for record in spec["records"]:
                block = mol_block(record)
                written[record["id"]] = ("sdf", block)
                blocks.append(block)
            data = "".join(blocks)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(data)
    check(written, params["checks"])


main()
