"""Mutation probes: wrong-but-plausible results made from the reference solution, which a
verifier that is not too lax must reject, and declared equivalences it must accept."""

from skillgym_reviewer.gates.mutation.equivalence import EquivalenceError, Equivalences
from skillgym_reviewer.gates.mutation.gate import EQUIVALENCE_GATE, GATE, MutationGates
from skillgym_reviewer.gates.mutation.llm import WrongSolutionWriter
from skillgym_reviewer.gates.mutation.model import Mutant, TrialResult

__all__ = [
    "EQUIVALENCE_GATE", "GATE", "EquivalenceError", "Equivalences", "Mutant", "MutationGates", "TrialResult",
    "WrongSolutionWriter",
]
