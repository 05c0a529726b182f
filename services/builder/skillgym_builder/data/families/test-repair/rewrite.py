# --- rewriting the broken modules from their docstrings and tests ---
import json
import pathlib
import sys

FILES = json.loads(sys.argv[1])  # {"path": "new content"}
for name, content in FILES.items():
    pathlib.Path(name).write_text(content)
    print(f"rewrote {name}")
