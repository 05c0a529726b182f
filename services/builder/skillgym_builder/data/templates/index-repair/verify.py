"""Verifier for index-repair: a healthy configuration, the exact rebuilt index, the named cause."""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import load_expected, read_json, run

EXPECTED = load_expected()
HEADINGS = EXPECTED["headings"]


def config():
    conf = read_json("index.conf.json")
    if conf.get("skill_file") != EXPECTED["skill_file"] or conf.get("output") != "index.json":
        return False
    if not all(conf["min_level"] <= h["level"] <= conf["max_level"] for h in HEADINGS):
        return False
    patterns = [re.compile(p) for p in conf.get("exclude", [])]
    return not any(p.search(h["title"]) for p in patterns for h in HEADINGS)


def index():
    got = read_json("index.json")
    return isinstance(got, list) and [(e["title"], e["level"], e["line"]) for e in got] == [
        (h["title"], h["level"], h["line"]) for h in HEADINGS
    ]


def diagnosis():
    return str(read_json("diagnosis.json").get("faulty_key", "")).strip() == EXPECTED["faulty_key"]


run([("config", config), ("index", index), ("diagnosis", diagnosis)])
