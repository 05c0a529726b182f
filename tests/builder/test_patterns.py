"""The stored difficulty-pattern pool: builders adding patterns at the same time keep every one,
and a pool stored in the earlier single-list form is still read."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from skillgym_builder.patterns import LEGACY_POOL_KEY, Pattern, PatternPool, pattern_key
from skillgym_core.store.base import put_json
from skillgym_core.store.local import LocalStore


def pattern(pattern_id: str) -> Pattern:
    return Pattern(id=pattern_id, demand="error-recovery", name=pattern_id, description=f"challenge {pattern_id}")


def test_patterns_added_side_by_side_are_all_kept(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    added = [pattern(f"added_{i}") for i in range(16)]

    def add(item: Pattern) -> bool:
        return PatternPool.load(store).add(store, item)  # each builder with the pool it loaded

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert all(pool.map(add, added))
    loaded = PatternPool.load(store).patterns
    assert {p.id for p in added} <= set(loaded) and set(PatternPool.builtin().patterns) <= set(loaded)
    assert not PatternPool.load(store).add(store, added[0]), "a known pattern is not added twice"


def test_a_pool_stored_as_one_list_is_still_read(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "store")
    put_json(store, LEGACY_POOL_KEY, [pattern("from_before").model_dump()])
    PatternPool.load(store).add(store, pattern("from_now"))
    assert {"from_before", "from_now"} <= set(PatternPool.load(store).patterns)


def test_an_id_that_is_no_safe_file_name_is_stored_under_its_hash() -> None:
    assert pattern_key("skill_bypass_guard") == "builder/patterns/skill_bypass_guard.json"
    unsafe = pattern_key("../../etc/passwd")
    assert unsafe.startswith("builder/patterns/") and ".." not in unsafe and unsafe.count("/") == 2
