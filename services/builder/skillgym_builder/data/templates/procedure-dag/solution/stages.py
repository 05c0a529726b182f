"""Step 3: each item's stage = length of the longest dependency chain ending at it."""

import json
import os
from pathlib import Path

edges = [tuple(edge) for edge in json.loads(Path("edges.json").read_text(encoding="utf-8"))]
order = [line.strip() for line in Path("plan.txt").read_text(encoding="utf-8").splitlines() if line.strip()]
stage = {item: 0 for item in order}
for node in order:
    for a, b in edges:
        if a == node:
            stage[b] = max(stage[b], stage[a] + 1)
Path("stages.json").write_text(json.dumps(stage, indent=2), encoding="utf-8")
os.remove("edges.json")
