"""Near-identical instructions across skills are found once their data is masked, and only where
the skills use different tools."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from skillgym_core import keys
from skillgym_core.contracts.events import EnvBuilt, Envelope
from skillgym_core.instruction_similarity import instruction_shingles, masked_words
from skillgym_core.store.local import LocalStore

from skillgym.task_variety import BuiltTask, instruction_variety, near_identical_pairs

PROFILE = ("# Profile the table\n\n`/app/data/{name}.csv` holds {rows} rows of {what}. Write `/app/out/profile.json` "
           "with the row count, the mean of every numeric column rounded to {digits} decimals, and the share of "
           "missing cells per column. Do not modify the input file.\n")
ALIGN = ("# Align the reads\n\nAlign every read in `/app/reads.fastq` against `/app/ref.fa` with the skill's "
         "scoring matrix and write the best local alignment of each read to `/app/out/alignments.tsv`.\n")


def task(task_id: str, skill: str, tools: set[str], instruction: str) -> BuiltTask:
    return BuiltTask(task_id, skill, "family", frozenset(tools), instruction_shingles(instruction))


def test_data_is_masked_before_comparing() -> None:
    words = masked_words('Read `/app/a.csv` (120 rows), sort by "price" and write out/b.json.')
    assert words == ["read", "<v>", "<n>", "rows", "sort", "by", "<v>", "and", "write", "<p>"]


def test_the_same_exercise_for_skills_with_different_tools_is_reported() -> None:
    tasks = [
        task("t1", "duckdb-skill", {"libraries:duckdb"}, PROFILE.format(name="sales", rows=40, what="records", digits=2)),
        task("t2", "geo-skill", {"libraries:geopandas"}, PROFILE.format(name="parcels", rows=90, what="records",
                                                                        digits=3)),
        task("t3", "align-skill", {"scripts:scripts/align.py"}, ALIGN),
    ]
    pairs = near_identical_pairs(tasks)
    assert [pair["skills"] for pair in pairs] == [["duckdb-skill", "geo-skill"]]
    assert pairs[0]["similarity"] >= 0.9


def test_instances_of_one_skill_and_skills_sharing_their_tools_are_not() -> None:
    text = PROFILE.format(name="x", rows=1, what="x", digits=1)
    assert near_identical_pairs([task("t1", "s1", {"libraries:pandas"}, text),
                                 task("t2", "s1", {"libraries:pandas"}, text)]) == []
    assert near_identical_pairs([task("t1", "s1", {"libraries:pandas"}, text),
                                 task("t2", "s2", {"libraries:pandas"}, text)]) == []


def _package(instruction: str, skill: str, library: str) -> bytes:
    toml = (f'[task]\nname = "x"\n\n[metadata]\nskill_id = "{skill}"\nskill_name = "{skill}"\n'
            f'template = "tabular-profile"\n\n'
            f'[metadata.skill_usage]\nkind = "library"\nscripts = []\nlibraries = ["{library}"]\ntools = []\n')
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, text in (("instruction.md", instruction), ("task.toml", toml)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_a_runs_built_tasks_are_compared_from_the_store(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    events = []
    for task_id, skill, library in (("t1", "s1", "duckdb"), ("t2", "s2", "polars"), ("t3", "s3", "missing")):
        if library != "missing":  # a task whose package is gone is left out, not an error
            store.put_bytes(keys.task_package(task_id), _package(PROFILE.format(name=skill, rows=5, what=skill,
                                                                                 digits=2), skill, library))
        events.append(Envelope.wrap(EnvBuilt(task_id=task_id, skill_id=skill, package_key="p", template="x"),
                                    producer="test", correlation_id="c"))
    variety = instruction_variety(store, events)
    assert variety["tasks_compared"] == 2 and variety["near_identical_pairs"] == 1
    assert variety["pairs"][0]["tasks"] == ["t1", "t2"] and variety["skills_involved"] == 2
