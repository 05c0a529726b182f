"""Steps 1-2: combine explicit and skill-order dependencies; write a topological order."""

import heapq
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skillmd import index_lines

REVERSE = "--reverse" in sys.argv
index = index_lines()
items = [json.loads(line) for line in Path("items.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
where = {item["id"]: index[item["text"]] for item in items}
edges = set()
for line in Path("deps.txt").read_text(encoding="utf-8").splitlines():
    if "->" in line:
        a, b = (part.strip() for part in line.split("->"))
        edges.add((a, b))
by_section = {}
for item_id, (section, number) in where.items():
    by_section.setdefault(section, []).append((number, item_id))
for members in by_section.values():
    members.sort()
    edges.update((members[i][1], members[i + 1][1]) for i in range(len(members) - 1))
Path("edges.json").write_text(json.dumps(sorted(edges)), encoding="utf-8")

indegree = {item_id: 0 for item_id in where}
for _, b in edges:
    indegree[b] += 1
key = (lambda s: tuple(-ord(c) for c in s)) if REVERSE else (lambda s: s)
ready = [(key(i), i) for i, d in indegree.items() if d == 0]
heapq.heapify(ready)
order = []
while ready:
    _, node = heapq.heappop(ready)
    order.append(node)
    for a, b in sorted(edges):
        if a == node:
            indegree[b] -= 1
            if indegree[b] == 0:
                heapq.heappush(ready, (key(b), b))
Path("plan.txt").write_text("\n".join(order) + "\n", encoding="utf-8")
