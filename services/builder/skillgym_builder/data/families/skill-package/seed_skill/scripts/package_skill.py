#!/usr/bin/env python3
"""Package one skill folder as <name>.skill: a zip archive whose entries sit under <name>/,
keeping file modes and leaving out OS and bytecode clutter."""

import os
import sys
import zipfile

SKIPPED_DIRS = {"__pycache__", ".git"}
SKIPPED_FILES = {".DS_Store"}


def package(folder, out_dir):
    folder = os.path.abspath(folder)
    name = os.path.basename(folder.rstrip(os.sep))
    if not os.path.isfile(os.path.join(folder, "SKILL.md")):
        raise SystemExit(f"{folder} has no SKILL.md")
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, name + ".skill")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for current, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for file_name in sorted(files):
                if file_name in SKIPPED_FILES or file_name.endswith(".pyc"):
                    continue
                path = os.path.join(current, file_name)
                archive.write(path, os.path.join(name, os.path.relpath(path, folder)))
    print(f"wrote {target}")
    return target


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit("usage: python3 -m scripts.package_skill SKILL_FOLDER OUTPUT_FOLDER")
    package(sys.argv[1], sys.argv[2])
