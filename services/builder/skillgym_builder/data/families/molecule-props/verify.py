"""Verifier for molecule-props: the library is re-read with RDKit from the protected inputs and
every expected value recomputed (invalid records, largest-fragment parents, duplicate groups
under the instance's stereo policy, descriptors, rule violations, substructure matches); the
planted structure in expected.json must agree with the recomputation, else the checker itself
is broken. The agent's files are read bounded; its SMILES are parsed, never trusted as text."""

import contextlib
import csv
import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import app_path, close, exact_int, load_expected, run
from rdkit import Chem, RDLogger
from rdkit.Chem import Crippen, Descriptors, rdMolDescriptors
from rdkit.Chem.MolStandardize import rdMolStandardize

RDLogger.DisableLog("rdApp.*")
E = load_expected()
MAX_BYTES = 2 * 1024 * 1024
TOL = 0.0015
FLOATS = ("mw", "exact_mass", "logp", "tpsa")
INTS = ("hbd", "hba", "rotatable_bonds", "rings")
ISOMERIC = E["stereo"] == "distinct"
CHOOSER = rdMolStandardize.LargestFragmentChooser()


def bounded_text(rel):
    with open(app_path(rel), "rb") as handle:
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise ValueError(f"{rel} is too large")
    return data.decode("utf-8")


def library(rel, fmt):
    """(id, molecule or None) in file order, from the protected input."""
    with open(app_path(rel), encoding="utf-8") as handle:
        text = handle.read()
    if fmt == "csv":
        return [(row["compound_id"], Chem.MolFromSmiles(row["smiles"]) if row["smiles"].strip() else None)
                for row in csv.DictReader(io.StringIO(text))]
    out = []
    for block in text.split("$$$$\n"):
        if block.strip():
            lines = block.split("\n")
            ident = lines[lines.index(">  <COMPOUND_ID>") + 1].strip()
            out.append((ident, Chem.MolFromMolBlock(block)))
    return out


def key(mol):
    return Chem.MolToSmiles(mol, isomericSmiles=ISOMERIC)


def violations(props):
    count = 0
    for name, (op, limit) in E["rule"]["thresholds"].items():
        value = props[name]
        count += not {"<=": value <= limit, "<": value < limit, ">=": value >= limit, ">": value > limit}[op]
    return count


def recompute():
    invalid, groups, truth, first = [], {}, {}, {}
    queries = {name: Chem.MolFromSmarts(smarts) for name, smarts in E["queries"].items()}
    for rel, fmt in E["files"]:
        for ident, mol in library(rel, fmt):
            if mol is None or mol.GetNumAtoms() == 0:
                invalid.append(ident)
                continue
            parent = CHOOSER.choose(mol)
            k = key(parent)
            if k in first:
                groups[first[k]].append(ident)
                continue
            first[k], groups[ident] = ident, []
            props = {"mw": Descriptors.MolWt(parent), "exact_mass": Descriptors.ExactMolWt(parent),
                     "logp": Crippen.MolLogP(parent), "tpsa": rdMolDescriptors.CalcTPSA(parent),
                     "hbd": rdMolDescriptors.CalcNumHBD(parent), "hba": rdMolDescriptors.CalcNumHBA(parent),
                     "rotatable_bonds": rdMolDescriptors.CalcNumRotatableBonds(parent),
                     "rings": rdMolDescriptors.CalcNumRings(parent)}
            props["violations"] = violations(props)
            props["passes"] = props["violations"] <= E["rule"]["max_violations"]
            props["formula"] = rdMolDescriptors.CalcMolFormula(parent)
            props["matches"] = sorted(n for n, q in queries.items() if parent.HasSubstructMatch(q))
            props["key"] = k
            truth[ident] = props
    if sorted(invalid) != sorted(E["planted"]["invalid"]) or \
            {k: sorted(v) for k, v in groups.items()} != {k: sorted(v) for k, v in E["planted"]["groups"].items()}:
        sys.exit("checker error: the recomputed library disagrees with the planted one")
    return invalid, groups, truth


INVALID, GROUPS, TRUTH = recompute()


def output():
    data = json.loads(bounded_text("out/compounds.json"))
    if not isinstance(data, dict) or not isinstance(data.get("compounds"), dict):
        raise TypeError("compounds.json needs an object under compounds")
    return data


def id_list(value):
    """A list of distinct strings, as a set."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value) or len(set(value)) != len(value):
        raise ValueError("expected a list of distinct strings")
    return {v.strip() for v in value}


def same_molecule(text, wanted):
    if not isinstance(text, str) or "." in text or len(text) > 2000:
        return False
    mol = Chem.MolFromSmiles(text)
    return mol is not None and mol.GetNumAtoms() > 0 and key(mol) == wanted


def compounds():
    got = output()["compounds"]
    if set(got) != set(TRUTH) or not all(isinstance(v, dict) for v in got.values()):
        raise ValueError("the compounds are not exactly the unique valid molecules")
    return [(got[ident], TRUTH[ident], ident) for ident in sorted(TRUTH)]


def validation():
    return id_list(output()["invalid"]) == set(INVALID)


def dedup():
    return all(id_list(mine["duplicates"]) == set(GROUPS[ident]) and same_molecule(mine["smiles"], want["key"])
               for mine, want, ident in compounds())


def descriptor_ok(mine, want):
    return (isinstance(mine.get("formula"), str) and mine["formula"].strip() == want["formula"]
            and all(close(mine[f], want[f], rel=0, abs_tol=TOL) for f in FLOATS)
            and all(exact_int(mine[f], want[f]) for f in INTS))


def descriptors():
    rows = compounds()
    good = 0
    for mine, want, _ in rows:
        with contextlib.suppress(KeyError, TypeError, ValueError):
            good += bool(descriptor_ok(mine, want))
    return good / len(rows)


def shortlist():
    rows = list(csv.DictReader(io.StringIO(bounded_text("out/shortlist.csv"))))
    ids = [str(row.get("id", "")).strip() for row in rows]
    if len(set(ids)) != len(ids) or set(ids) != {i for i, t in TRUTH.items() if t["passes"]}:
        return False
    for row, ident in zip(rows, ids, strict=True):
        want = TRUTH[ident]
        if not same_molecule(row["smiles"].strip(), want["key"]) or float(row["violations"]) != want["violations"]:
            return False
        if not (close(float(row["mw"]), want["mw"], rel=0, abs_tol=TOL)
                and close(float(row["logp"]), want["logp"], rel=0, abs_tol=TOL)):
            return False
    return True


def rule_filter():
    flags = all(exact_int(mine["violations"], want["violations"]) and mine["passes"] is want["passes"]
                for mine, want, _ in compounds())
    return flags and shortlist()


def substructures():
    return all(id_list(mine["matches"]) == set(want["matches"]) for mine, want, _ in compounds())


run([("validation", validation), ("dedup", dedup), ("descriptors", descriptors), ("filter", rule_filter),
     ("substructures", substructures)])
