"""Near misses the verifier lets through where it does check the value. A near-miss mutant
(a number cut to a whole one, a full id cut to a short prefix, an identifier with spaces for
its separators, a zero-valued record a filter should have dropped) that survives is decisive
when a plainly wrong value at the same place was rejected: the check reads that place but
compares it too loosely for the exact answer asked. Places the verifier never reads (a
timestamp, a free-text note) are left to the mutation score."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult

NEAR_MISSES = frozenset({"truncate_number", "shorten_id", "recase_identifier", "add_zero_record"})
CONTAINER_CHANGES = frozenset({"add_zero_record"})  # placed at a list: any place inside it counts
_INDEX = re.compile(r"\[\d+\]")
_ROW = re.compile(r"^row \d+\.")


def place(mutant: Mutant) -> str | None:
    """Where a mutant changes its file, list positions aside: ``out.json:$.rows[*].total``,
    ``t.csv:column qty``; None where the location names no stable place (a line of text)."""
    if mutant.location.startswith("$"):
        return f"{mutant.file}:{_INDEX.sub('[*]', mutant.location)}"
    if _ROW.match(mutant.location):
        return f"{mutant.file}:column {_ROW.sub('', mutant.location)}"
    return None


def decisive_near_misses(results: Sequence[TrialResult], mutants: Mapping[str, Mutant]) -> list[str]:
    """The surviving near misses at places where another value mutant was rejected."""
    checked = {where for r in results if r.verdict == "killed" and (m := mutants.get(r.name)) is not None
               and m.effect == "value" and m.operator not in NEAR_MISSES and (where := place(m)) is not None}
    found = []
    for result in results:
        mutant = mutants.get(result.name)
        if result.verdict != "survived" or mutant is None or mutant.operator not in NEAR_MISSES:
            continue
        where = place(mutant)
        if where is None:
            continue
        if mutant.operator in CONTAINER_CHANGES:
            inside = where.removesuffix("[*]")
            hit = any(other.startswith(inside) for other in checked)
        else:
            hit = where in checked
        if hit:
            found.append(result.name)
    return found
