"""Step 3: list query ids in the order their quotes appear in the skill."""

import json
import os

with open("out/.lines.json", encoding="utf-8") as handle:
    lines = json.load(handle)
with open("out/order.txt", "w", encoding="utf-8") as out:
    out.write("\n".join(sorted(lines, key=lines.get)) + "\n")
os.remove("out/.lines.json")
