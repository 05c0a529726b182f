"""When the sandbox network policy as stored differs from the one wanted."""

from __future__ import annotations

import copy

from skillgym_operator import builders
from skillgym_operator.runs.network import drifted, normalised
from skillgym_operator.settings import OperatorSettings

WANTED = builders.sandbox_network_policy("ns", OperatorSettings())


def test_what_an_api_server_leaves_out_is_no_drift() -> None:
    stored = copy.deepcopy(WANTED)
    del stored["spec"]["ingress"]  # an empty list comes back omitted
    stored["metadata"]["resourceVersion"] = "7"
    assert not drifted(WANTED, stored)
    assert normalised({"a": [], "b": {}, "c": None, "d": [{"e": []}]}) == {"d": [{}]}


def test_an_opened_egress_or_a_narrowed_selector_is_drift() -> None:
    opened = copy.deepcopy(WANTED)
    opened["spec"]["egress"].append({})  # egress to everywhere
    assert drifted(WANTED, opened)
    narrowed = copy.deepcopy(WANTED)
    narrowed["spec"]["podSelector"] = {"matchLabels": {"nothing": "matches"}}
    assert drifted(WANTED, narrowed)
    removed = copy.deepcopy(WANTED)
    removed["spec"]["policyTypes"] = ["Ingress"]
    assert drifted(WANTED, removed)
