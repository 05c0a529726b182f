"""The builder remembers what each family asked of each skill: the same exercise for another
skill whose task uses other tools is found, copies and the skill's own revisions are not."""

from __future__ import annotations

from pathlib import Path

from skillgym_builder.variety import FamilyInstructions
from skillgym_core import keys
from skillgym_core.store.local import LocalStore

SUMMARISE = ("# Summarise the reads\n\n`/app/{name}.fastq` holds {n} reads and `/app/contigs.fa` {m} contigs. Write "
             "`/app/out/summary.json` with the read count, the mean read length, the GC share and the N50 of the "
             "contigs, rounded to {d} decimals.\n")
ALIGN = ("# Align the reads\n\nAlign every read in `/app/reads.fastq` against `/app/ref.fa` with the skill's "
         "scoring matrix and write the best local alignment of each read to `/app/out/alignments.tsv`.\n")


def test_the_same_exercise_for_another_skills_tools_is_found(tmp_path: Path) -> None:
    memory = FamilyInstructions(LocalStore(tmp_path))
    memory.record("sequence-stats", "s-align", "t1", frozenset({"library:parasail"}),
                  SUMMARISE.format(name="sample", n=40, m=3, d=2))
    same = memory.same_task("sequence-stats", "s-restrict", frozenset({"library:biopython"}),
                            SUMMARISE.format(name="other", n=90, m=5, d=3))
    assert same is not None and same["skill_id"] == "s-align" and same["task_id"] == "t1"
    assert same["similarity"] >= 0.9


def test_a_varied_goal_a_copy_and_the_skills_own_revision_pass(tmp_path: Path) -> None:
    memory = FamilyInstructions(LocalStore(tmp_path))
    text = SUMMARISE.format(name="sample", n=40, m=3, d=2)
    memory.record("sequence-stats", "s-align", "t1", frozenset({"library:parasail"}), text)
    assert memory.same_task("sequence-stats", "s-other", frozenset({"library:biopython"}), ALIGN) is None
    assert memory.same_task("sequence-stats", "s-copy", frozenset({"library:parasail"}), text) is None
    assert memory.same_task("sequence-stats", "s-align", frozenset({"library:other"}), text) is None
    assert memory.same_task("other-family", "s-x", frozenset({"library:x"}), text) is None


def test_an_unreadable_record_is_no_match(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    store.put_bytes(keys.family_instruction("sequence-stats", "s-broken"), b"{not json")
    assert FamilyInstructions(store).same_task("sequence-stats", "s-new", frozenset(), ALIGN) is None


def test_each_record_is_read_once_per_builder(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    FamilyInstructions(store).record("sequence-stats", "s-align", "t1", frozenset({"library:parasail"}),
                                     SUMMARISE.format(name="a", n=1, m=1, d=1))
    memory = FamilyInstructions(store)
    reads: list[str] = []
    original = store.get_bytes
    store.get_bytes = lambda key: reads.append(key) or original(key)  # type: ignore[method-assign]
    for _ in range(3):
        assert memory.same_task("sequence-stats", "s-new", frozenset({"library:x"}), ALIGN) is None
    assert reads == [keys.family_instruction("sequence-stats", "s-align")]
