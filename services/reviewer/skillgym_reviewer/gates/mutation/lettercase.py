"""Letter case where the instruction makes it part of the answer ("lowercase ids", "the link
target as written", "case-sensitive"): the values of the structured outputs in another case,
one site per field, judged like near misses (:mod:`.exactness`): one the verifier accepts at a
field where it rejected a plainly wrong value is decisive, the check reads the field but ignores
what the instruction asked of it. Elsewhere case is left to the declared ``case`` equivalence,
which many comparisons rightly ignore, so these mutants are made only where
:func:`.exactness.case_asked` holds."""

from __future__ import annotations

from collections.abc import Mapping

from skillgym_reviewer.gates.mutation.generate import file_kind
from skillgym_reviewer.gates.mutation.model import Mutant, seeded
from skillgym_reviewer.gates.mutation.structured import change_case_leaf, parsed_tree, render
from skillgym_reviewer.gates.mutation.tables import Table, change_case_cell


def case_mutants(outputs: Mapping[str, bytes], seed: int) -> list[Mutant]:
    """Values of the JSON, YAML and table outputs in another case, one site per field."""
    mutants: list[Mutant] = []
    for rel, data in sorted(outputs.items()):
        kind = file_kind(rel, data)
        rng = seeded(seed, rel, "change_case")
        if kind in ("json", "yaml"):
            tree, dump = parsed_tree(data.decode("utf-8"), kind)
            for name, path, new, effect in change_case_leaf(tree, rng):
                mutants.append(Mutant(rel, name, render(path), dump(new).encode(), effect, cover=True))
        elif kind == "table":
            table = Table(rel, data.decode("utf-8"))
            for name, where, rows, effect in change_case_cell(table, rng):
                mutants.append(Mutant(rel, name, where, table.dump(rows).encode(), effect, cover=True))
    return [m for m in mutants if m.content != outputs[m.file]]
