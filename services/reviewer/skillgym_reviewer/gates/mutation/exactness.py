"""Near misses the verifier lets through where it does check the value. A near-miss mutant
(a number cut to a whole one, a full id cut to a short prefix, an identifier with spaces for
its separators, a zero-valued record a filter should have dropped, a value in another case where
the instruction asks for its case) that survives is decisive
when a plainly wrong value at the same place was rejected: the check reads that place but
compares it too loosely for the exact answer asked. Places the verifier never reads (a
timestamp, a free-text note) are left to the mutation score."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence

from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult

NEAR_MISSES = frozenset({"truncate_number", "shorten_id", "recase_identifier", "add_zero_record", "change_case"})
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


def _survivors(results: Sequence[TrialResult], mutants: Mapping[str, Mutant],
               operators: frozenset[str]) -> Iterator[tuple[TrialResult, Mutant]]:
    for result in results:
        mutant = mutants.get(result.name)
        if result.verdict == "survived" and mutant is not None and mutant.operator in operators:
            yield result, mutant


def decisive_near_misses(results: Sequence[TrialResult], mutants: Mapping[str, Mutant]) -> list[str]:
    """The surviving near misses at places where another value mutant was rejected."""
    checked = {where for r in results if r.verdict == "killed" and (m := mutants.get(r.name)) is not None
               and m.effect == "value" and m.operator not in NEAR_MISSES and (where := place(m)) is not None}
    found = []
    for result, mutant in _survivors(results, mutants, NEAR_MISSES):
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


ORDER_CHANGES = frozenset({"swap_elements", "swap_rows"})
# The instruction is the contract: an order it asks for ("ranked", "sorted", "newest first") must
# be checked; one it leaves open, or never mentions, need not be.
_ORDER_ASKED = re.compile(
    r"\b(?:rank(?:ed|ing|s)?|sort(?:ed|s)?|ascending|descending|chronological(?:ly)?|in (?:the )?order|ordered by"
    r"|order of|in sequence|(?:highest|lowest|largest|smallest|biggest|most|least|newest|oldest|earliest|latest)"
    r"\b[\w\s-]{0,30}?\bfirst)\b", re.I)
_ORDER_FREE = re.compile(
    r"\b(?:(?:in )?any order|no particular order|order (?:does not|doesn't|need not) matter|unordered"
    r"|order is (?:not|free))\b", re.I)


def _asked(instruction: str, asked: re.Pattern[str], freed: re.Pattern[str]) -> bool:
    return asked.search(instruction) is not None and freed.search(instruction) is None


def order_asked(instruction: str) -> bool:
    """Whether the instruction asks for an order and does not say the order is free."""
    return _asked(instruction, _ORDER_ASKED, _ORDER_FREE)


# Letter case likewise, where the instruction says so of the answer ("case-sensitive", "exactly as
# it appears", "as written", "letter case included"). "lowercase" alone is left out: it describes
# inputs ("partly lower case") and formats ("lowercase hex") as often as it asks for an answer.
_CASE_ASKED = re.compile(
    r"\b(?:case[- ]sensitive(?:ly)?|verbatim|character for character|as (?:it is |they are )?written"
    r"|exactly as (?:given|shown|spelled|written|it appears|they appear)|same (?:letter )?case|letter case"
    r"|capitali[sz](?:ation|ed) (?:kept|preserved|included|as))\b", re.I)
_CASE_FREE = re.compile(
    r"\b(?:case[- ]insensitive(?:ly)?|any (?:letter )?case|(?:letter )?case (?:does not|doesn't|need not) matter"
    r"|ignor(?:e|es|ing) (?:the )?(?:letter )?case|regardless of (?:letter )?case)\b", re.I)


def case_asked(instruction: str) -> bool:
    """Whether the instruction makes letter case part of the answer and does not free it."""
    return _asked(instruction, _CASE_ASKED, _CASE_FREE)


def _list_place(mutant: Mutant) -> str | None:
    """The list an order mutant reorders (``out.json:$.regions``), or the file for table rows."""
    if mutant.operator == "swap_elements":
        return f"{mutant.file}:{_INDEX.sub('[*]', mutant.location).removesuffix('[*]')}"
    if mutant.operator == "swap_rows":
        return f"{mutant.file}:"
    return None


def unchecked_orders(results: Sequence[TrialResult], mutants: Mapping[str, Mutant]) -> list[str]:
    """Surviving reorderings of a list (or table) whose contents the verifier does check: a wrong
    value inside it was rejected, yet its order, which no declared equivalence and no valid
    alternative leaves open, is never compared. A list whose order is free should say so
    (``reorder_lists`` / ``reorder_rows``), which also makes a reordered answer a must-accept."""
    killed_inside = [f"{m.file}:{m.location}" for r in results if r.verdict == "killed"
                     and (m := mutants.get(r.name)) is not None and m.effect in ("value", "type", "key")]
    found = []
    for result, mutant in _survivors(results, mutants, ORDER_CHANGES):
        where = _list_place(mutant)
        if where is None:
            continue
        if mutant.operator == "swap_rows":
            hit = any(other.startswith(where) for other in killed_inside)
        else:
            hit = any(other.startswith((where + "[", where + ".")) for other in killed_inside)
        if hit:
            found.append(result.name)
    return found
