# --- applying the fixes found by reading the failing tests and the code ---
import json
import pathlib
import sys

EDITS = json.loads(sys.argv[1])  # [{"file": ..., "old": ..., "new": ...}]
for edit in EDITS:
    path = pathlib.Path(edit["file"])
    text = path.read_text()
    if text.count(edit["old"]) != 1:
        raise SystemExit(f"{path}: the code to change is not where it was: {edit['old']!r}")
    path.write_text(text.replace(edit["old"], edit["new"]))
    print(f"fixed {path}")
