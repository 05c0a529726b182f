"""Every rubric item of every family, and every check inside a composite item: the verifier
weakened by making that check always pass (in the task's copy of the rubric runner, so
verifiers of any shape can be weakened) is rejected as too lax, the mutation gate naming it. Each case is a full review, so all of
them run only with ``SKILLGYM_TEST_EXHAUSTIVE=1``; every family's own test module checks one item
of its rubric in every run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from skillgym_builder.families import registry
from skillgym_builder.families.common import source
from skillgym_core.envbuild import LocalVenvProvider

from tests.builder.family_support import assert_weakened_verifier_rejected
from tests.reviewer.weaken import composite_checks

pytestmark = [pytest.mark.slow, pytest.mark.skipif(os.environ.get("SKILLGYM_TEST_EXHAUSTIVE") != "1",
                                                   reason="every rubric item: SKILLGYM_TEST_EXHAUSTIVE=1")]


def _composite_checks(family_id: str) -> list[str]:
    try:
        return composite_checks(source(family_id, "verify.py"))
    except FileNotFoundError:  # a family whose verifier is generated per instance
        return []


CASES = [(family_id, name) for family_id in registry().ids()
         for name in [item.name for item in registry().get(family_id).spec.rubric] + _composite_checks(family_id)]


@pytest.mark.parametrize(("family_id", "item"), CASES, ids=[f"{family}-{item}" for family, item in CASES])
def test_every_weakened_family_verifier_is_rejected_as_too_lax(tmp_path: Path, env_provider: LocalVenvProvider,
                                                                family_id: str, item: str) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, family_id, item)
