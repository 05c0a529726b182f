"""Verifier for layered-config: each service's effective configuration and provenance against
the merge recomputed when the layers were generated, held as digests of canonical JSON (key
order and formatting free; list order, types and values exact)."""

import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import load_expected, read_json, run

E = load_expected()


def digest(value):
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def matches(rel, expected):
    got = read_json(rel)
    return isinstance(got, dict) and set(got) == set(expected) and all(digest(got[k]) == v for k, v in expected.items())


run([("effective", lambda: matches("out/effective.json", E["effective"])),
     ("provenance", lambda: matches("out/provenance.json", E["provenance"]))])
