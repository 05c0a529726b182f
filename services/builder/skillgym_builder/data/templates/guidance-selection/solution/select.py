"""Map candidates to skill sections, then search the subsets for one meeting every constraint."""

import itertools
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skillmd import clean, index_lines

LARGEST = "--largest" in sys.argv
index = index_lines()
candidates = [json.loads(line) for line in Path("candidates.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
rules = json.loads(Path("constraints.json").read_text(encoding="utf-8"))
section = {c["id"]: index[c["text"]][0].casefold() for c in candidates}
minutes = {c["id"]: c["minutes"] for c in candidates}
cover = [clean(s).casefold() for s in rules["cover_sections"]]
cap = clean(rules["cap_section"]).casefold()


def ok(subset):
    chosen = [section[i] for i in subset]
    return (
        sum(minutes[i] for i in subset) <= rules["budget_minutes"]
        and len(subset) >= rules["min_items"]
        and all(s in chosen for s in cover)
        and chosen.count(cap) <= rules["cap_count"]
    )


ids = sorted(minutes)
sizes = range(len(ids), 0, -1) if LARGEST else range(1, len(ids) + 1)
best = next(list(s) for n in sizes for s in itertools.combinations(ids, n) if ok(s))
Path("selection.json").write_text(json.dumps({"selected": best, "total_minutes": sum(minutes[i] for i in best)}, indent=2), encoding="utf-8")
