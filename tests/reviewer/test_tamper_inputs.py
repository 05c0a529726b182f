"""Forged inputs for the tamper probe: the reference solution must still be able to read them,
so a settings file has a value changed rather than a key dropped."""

from __future__ import annotations

import json

from skillgym_reviewer.gates.probes import changed_inputs


def test_a_settings_file_gets_a_value_changed_and_keeps_its_keys() -> None:
    policy = {"currency": "EUR", "weekly_limit": 40}
    (forged,) = changed_inputs("policy.json", json.dumps(policy).encode())
    changed = json.loads(forged)
    assert set(changed) == set(policy) and changed["currency"] == "EUR" and changed["weekly_limit"] != 40


def test_a_data_file_loses_a_record_the_last_then_one_from_the_middle() -> None:
    data = b"id,n\na,1\nb,2\nc,3\nd,4\n"
    variants = changed_inputs("t.csv", data)
    assert variants[0] == b"id,n\na,1\nb,2\nc,3\n"
    assert len(variants) == 2 and variants[1].count(b"\n") == 4 and variants[1] != variants[0]
    assert changed_inputs("names.json", b'["a", "b"]') == [b'["a"]']
