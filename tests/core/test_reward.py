"""The verdict reader on hostile reward files, checked against an independent oracle, and the
rubric's bounds on item scores."""

from __future__ import annotations

import json
import math
import os
import random
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pytest
from skillgym_core.reward import (
    MAX_REWARD_FILE_BYTES,
    RewardReading,
    read_reward,
    read_verdict,
)
from skillgym_core.rubric import EvalSpec, score_rubric

Setup = Callable[[Path], None]


def files(txt: bytes | None = None, json_: bytes | None = None) -> Setup:
    def setup(logs: Path) -> None:
        if txt is not None:
            (logs / "reward.txt").write_bytes(txt)
        if json_ is not None:
            (logs / "reward.json").write_bytes(json_)

    return setup


def directory(name: str) -> Setup:
    return lambda logs: (logs / name).mkdir()


def fifo(name: str) -> Setup:
    return lambda logs: os.mkfifo(logs / name)


def link_to_one(logs: Path) -> None:
    (logs.parent / "elsewhere.txt").write_text("1\n")
    (logs / "reward.txt").symlink_to(logs.parent / "elsewhere.txt")


def deep(depth: int, opening: str = "[", closing: str = "]") -> bytes:
    return (opening * depth + closing * depth).encode()


HUGE = "1" + "0" * 400
HOSTILE: list[tuple[str, Setup, str]] = [
    ("400-digit integer in json", files(json_=f'{{"reward": {HUGE}}}'.encode()), "bad_reward"),
    ("5000-digit integer in json", files(json_=b'{"reward": 1' + b"0" * 5000 + b"}"), "bad_reward"),
    ("400-digit integer in txt", files(txt=HUGE.encode()), "bad_reward"),
    ("10k-deep arrays", files(json_=deep(10_000)), "bad_reward"),
    ("10k-deep objects", files(json_=b'{"a":' * 10_000 + b"1" + b"}" * 10_000), "bad_reward"),
    ("deep value", files(json_=b'{"reward": ' + deep(10_000) + b"}"), "bad_reward"),
    ("33-deep", files(json_=deep(33)), "bad_reward"),
    ("NaN literal", files(json_=b'{"reward": NaN}'), "bad_reward"),
    ("Infinity literal", files(json_=b'{"reward": Infinity}'), "bad_reward"),
    ("-Infinity literal", files(json_=b'{"a": 1, "b": -Infinity}'), "bad_reward"),
    ("overflowing float json", files(json_=b'{"reward": 1e400}'), "bad_reward"),
    ("nan txt", files(txt=b"nan"), "bad_reward"),
    ("NaN txt", files(txt=b"NaN\n"), "bad_reward"),
    ("inf txt", files(txt=b"inf"), "bad_reward"),
    ("overflowing float txt", files(txt=b"1e400"), "bad_reward"),
    ("negative txt", files(txt=b"-0.1"), "bad_reward"),
    ("negative json", files(json_=b'{"reward": -0.1}'), "bad_reward"),
    ("above one txt", files(txt=b"1.0000001"), "bad_reward"),
    ("above one json", files(json_=b'{"reward": 1.0000001}'), "bad_reward"),
    ("above one as an item", files(json_=b'{"reward": 1, "style": 2}'), "bad_reward"),
    ("string in json", files(json_=b'{"reward": "1"}'), "bad_reward"),
    ("quoted txt", files(txt=b'"1"'), "bad_reward"),
    ("true in json", files(json_=b'{"reward": true}'), "bad_reward"),
    ("true txt", files(txt=b"true"), "bad_reward"),
    ("null in json", files(json_=b'{"reward": null}'), "bad_reward"),
    ("array json", files(json_=b"[1]"), "bad_reward"),
    ("bare number json", files(json_=b"1"), "bad_reward"),
    ("empty object", files(json_=b"{}"), "bad_reward"),
    ("empty txt", files(txt=b""), "bad_reward"),
    ("empty json", files(json_=b""), "bad_reward"),
    ("whitespace txt", files(txt=b" \n\t "), "bad_reward"),
    ("two numbers", files(txt=b"1 1"), "bad_reward"),
    ("two lines", files(txt=b"1\n0\n"), "bad_reward"),
    ("underscore digits", files(txt=b"1_0"), "bad_reward"),
    ("non-ASCII digit", files(txt="\u0661".encode()), "bad_reward"),
    ("invalid UTF-8 txt", files(txt=b"\xff\xfe1"), "bad_reward"),
    ("invalid UTF-8 json", files(json_=b'{"reward": 1}\xff'), "bad_reward"),
    ("NUL txt", files(txt=b"1\x00"), "bad_reward"),
    ("NUL json", files(json_=b'{"reward": 1}\x00'), "bad_reward"),
    ("BOM txt", files(txt=b"\xef\xbb\xbf1"), "bad_reward"),
    ("BOM json", files(json_=b'\xef\xbb\xbf{"reward": 1}'), "bad_reward"),
    ("UTF-16 json", files(json_='{"reward": 1}'.encode("utf-16")), "bad_reward"),
    ("duplicate keys", files(json_=b'{"reward": 0, "reward": 1}'), "bad_reward"),
    ("too many keys", files(json_=json.dumps({f"k{i}": 1 for i in range(257)}).encode()), "bad_reward"),
    ("long key", files(json_=json.dumps({"k" * 129: 1}).encode()), "bad_reward"),
    ("directory reward.json", directory("reward.json"), "bad_reward"),
    ("directory reward.txt", directory("reward.txt"), "bad_reward"),
    ("FIFO reward.txt", fifo("reward.txt"), "bad_reward"),
    ("FIFO reward.json", fifo("reward.json"), "bad_reward"),
    ("symlink to a file holding 1", link_to_one, "bad_reward"),
    ("oversized txt", files(txt=b"1" + b" " * MAX_REWARD_FILE_BYTES), "bad_reward"),
    ("oversized json", files(json_=b'{"reward": 1}' + b" " * MAX_REWARD_FILE_BYTES), "bad_reward"),
    ("bad txt beside good json", files(txt=b"yes", json_=b'{"reward": 1}'), "bad_reward"),
    ("good txt beside bad json", files(txt=b"1", json_=b'{"reward": 1'), "bad_reward"),
    ("conflict txt=0 json=1", files(txt=b"0\n", json_=b'{"reward": 1}'), "reward_conflict"),
    ("conflict txt=1 json=0", files(txt=b"1", json_=b'{"reward": 0, "check": 1}'), "reward_conflict"),
    ("conflict with the mean", files(txt=b"1", json_=b'{"a": 1, "b": 0}'), "reward_conflict"),
    ("neither file", files(), "reward_file_missing"),
]


@pytest.mark.timeout(20)  # a FIFO opened for reading would block forever
@pytest.mark.parametrize(("case", "setup", "failure"), HOSTILE, ids=[case for case, _, _ in HOSTILE])
def test_hostile_reward_files_fail_typed(tmp_path: Path, case: str, setup: Setup, failure: str) -> None:
    logs = tmp_path / "verifier"
    logs.mkdir()
    setup(logs)
    reading = read_verdict(logs)
    assert reading.failure == failure, reading
    assert reading.reward is None and reading.rewards == {}
    assert reading.detail and len(reading.detail) <= 300
    assert read_reward(logs) is None


@pytest.mark.parametrize(
    ("setup", "reward", "rewards"),
    [
        (files(txt=b"1"), 1.0, {"reward": 1.0}),
        (files(txt=b"  0.25 \n"), 0.25, {"reward": 0.25}),
        (files(txt=b"-0"), 0.0, {"reward": 0.0}),
        (files(txt=b"1e-400"), 0.0, {"reward": 0.0}),
        (files(json_=b'{"reward": 1, "style": 0}'), 1.0, {"reward": 1.0, "style": 0.0}),
        (files(json_=b'{"correct": 1, "style": 0.5}'), 0.75, {"correct": 1.0, "style": 0.5}),
        (files(txt=b"0.5\n", json_=b'{"reward": 0.5, "a": 1}'), 0.5, {"reward": 0.5, "a": 1.0}),
        (files(txt=b"0.75", json_=b'{"a": 1, "b": 0.5}'), 0.75, {"a": 1.0, "b": 0.5}),
        (files(txt=b"0.3333333", json_=b'{"reward": 0.33333334}'), 0.33333334, {"reward": 0.33333334}),
    ],
)
def test_sound_reward_files(tmp_path: Path, setup: Setup, reward: float, rewards: dict[str, float]) -> None:
    setup(tmp_path)
    assert read_verdict(tmp_path) == RewardReading(reward, rewards)
    assert read_reward(tmp_path) == (reward, rewards)


def test_a_linked_or_absent_log_directory(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "reward.txt").write_text("1")
    (tmp_path / "logs").symlink_to(real)
    assert read_verdict(tmp_path / "logs").failure == "bad_reward"
    assert read_verdict(tmp_path / "nowhere").failure == "reward_file_missing"
    (tmp_path / "file").write_text("1")
    assert read_verdict(tmp_path / "file").failure == "reward_file_missing"


def test_detail_never_echoes_long_content(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("SECRET" * 1000)
    reading = read_verdict(tmp_path)
    assert reading.failure == "bad_reward" and reading.detail.count("SECRET") <= 12


# -- fuzzing against an independent oracle -------------------------------------------------

TXT_CHARS = set("0123456789+-.eE")


def oracle_txt(data: bytes) -> float | None:
    """The number reward.txt holds, or None when it holds anything else."""
    text = data.strip()
    if not text or set(text.decode("latin-1")) - TXT_CHARS:
        return None
    try:
        value = float(Decimal(text.decode()))
    except (InvalidOperation, ValueError):
        return None
    return value if math.isfinite(value) and 0 <= value <= 1 else None


def oracle_json(data: bytes) -> tuple[float, dict[str, float]] | None:
    def pairs(items: list[tuple[str, object]]) -> dict[str, object]:
        if len({key for key, _ in items}) != len(items):
            raise ValueError("repeated key")
        return dict(items)

    try:
        parsed = json.loads(data.decode("utf-8"), object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    if not isinstance(parsed, dict) or not 0 < len(parsed) <= 256 or any(len(key) > 128 for key in parsed):
        return None
    rewards: dict[str, float] = {}
    for key, value in parsed.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            return None  # NaN fails the comparison
        rewards[key] = float(value)
    overall = rewards["reward"] if "reward" in rewards else sum(rewards.values()) / len(rewards)
    return overall, rewards


def oracle(txt: bytes | None, json_: bytes | None) -> tuple[str | None, float | None]:
    """(failure, reward) the reader must give for these reward files."""
    if txt is None and json_ is None:
        return "reward_file_missing", None
    if any(data is not None and len(data) > MAX_REWARD_FILE_BYTES for data in (txt, json_)):
        return "bad_reward", None
    txt_value = None if txt is None else oracle_txt(txt)
    json_value = None if json_ is None else oracle_json(json_)
    if (txt is not None and txt_value is None) or (json_ is not None and json_value is None):
        return "bad_reward", None
    if json_value is None:
        return None, txt_value
    if txt_value is not None and abs(txt_value - json_value[0]) > 1e-6:
        return "reward_conflict", None
    return None, json_value[0]


NUMBERS = [
    "0", "1", "1.0", "0.5", "-0", "-0.0", "1.0000001", "0.9999999", "-0.1", "2", "1e0", "1E-0", "10e-1",
    ".5", "1.", "+1", "1e400", "-1e400", "1e-400", HUGE, "-" + HUGE, "9" * 5000, "NaN", "Infinity",
    "-Infinity", "nan", "inf", "true", "false", "null", '"1"', "01", "1_0", "0x1", "1e", "--1",
]  # fmt: skip


def random_number(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.4:
        return rng.choice(NUMBERS)
    if roll < 0.7:
        return repr(rng.uniform(-0.5, 1.5))
    if roll < 0.8:
        return str(rng.choice([0, 1]) * rng.randint(1, 10) ** rng.randint(0, 500) * rng.choice([1, -1]))
    return f"{rng.randint(-3, 12)}e{rng.randint(-400, 400)}"


def random_json(rng: random.Random) -> bytes:
    roll = rng.random()
    keys = ["reward", "a", "b", "style", "k" * 130, "reward"]
    if roll < 0.5:
        chosen = rng.sample(keys[:5], rng.randint(1, 3)) + (["reward"] if rng.random() < 0.05 else [])
        values = [random_number(rng) for _ in chosen]
        if rng.random() < 0.2:
            values[0] = rng.choice(["[1]", '{"x": 1}', "[" * rng.randint(1, 100) + "1" + "]" * rng.randint(0, 100)])
        text = "{" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in zip(chosen, values, strict=True)) + "}"
    elif roll < 0.6:
        depth = rng.choice([1, 10, 31, 32, 33, 100, 5000])
        text = '{"a":' * depth + "1" + "}" * depth
    else:
        text = json.dumps({"reward": rng.choice([0, 1, 0.5]), "a": rng.choice([0, 1])})
    data = bytearray(text.encode())
    for _ in range(rng.choice([0, 0, 1, 2, 5])):
        mutate(rng, data)
    return bytes(data)


def random_txt(rng: random.Random) -> bytes:
    pad = lambda: rng.choice(["", " ", "\n", "\t", "\r\n", "\x0b", "\xa0"])  # noqa: E731
    data = bytearray((pad() + random_number(rng) + pad()).encode())
    if rng.random() < 0.2:
        mutate(rng, data)
    return bytes(data)


def mutate(rng: random.Random, data: bytearray) -> None:
    position = rng.randint(0, len(data))
    action = rng.choice(["insert", "delete", "replace"])
    byte = rng.choice([0, 0xFF, 0xEF, ord("1"), ord("{"), ord("["), ord('"'), ord("\\"), rng.randint(0, 255)])
    if action == "insert" or not data:
        data.insert(position, byte)
    elif action == "delete":
        del data[min(position, len(data) - 1)]
    else:
        data[min(position, len(data) - 1)] = byte


def random_case(rng: random.Random) -> tuple[bytes | None, bytes | None]:
    roll = rng.random()
    if roll < 0.1:
        return rng.randbytes(rng.randint(0, 64)), rng.randbytes(rng.randint(0, 64)) if rng.random() < 0.5 else None
    if roll < 0.3:
        return random_txt(rng), None
    if roll < 0.55:
        return None, random_json(rng)
    txt, json_ = random_txt(rng), random_json(rng)
    overall, roll = oracle_json(json_), rng.random()
    if overall and roll < 0.4:  # an agreeing pair
        txt = repr(overall[0]).encode()
    elif roll < 0.8:  # a sound reward.txt, most often disagreeing
        txt = rng.choice([b"0", b"1\n", b"0.5", repr(rng.random()).encode()])
    return txt, json_


def test_fuzzed_reward_files_never_raise_and_agree_with_the_oracle(tmp_path: Path) -> None:
    rng = random.Random(20240917)
    outcomes: dict[str | None, int] = {}
    for case in range(2500):
        txt, json_ = random_case(rng)
        logs = tmp_path / str(case)
        logs.mkdir()
        files(txt, json_)(logs)
        reading = read_verdict(logs)
        failure, reward = oracle(txt, json_)
        assert reading.failure == failure, (txt, json_, reading)
        if failure is None:
            assert reading.reward == pytest.approx(reward, abs=1e-12), (txt, json_, reading)
            assert all(0 <= value <= 1 for value in reading.rewards.values())
        if reading.reward == 1.0:
            assert reward == 1.0, (txt, json_)
        outcomes[reading.failure] = outcomes.get(reading.failure, 0) + 1
    # the generator reaches every verdict often enough to mean something
    assert min(outcomes.get(f, 0) for f in (None, "bad_reward", "reward_conflict")) >= 50, outcomes


# -- rubric item scores ---------------------------------------------------------------------

SPEC = EvalSpec.model_validate(
    {
        "rubric": [
            {"id": "answer", "weight": 0.5, "method": "deterministic"},
            {"id": "style", "weight": 0.5, "method": "deterministic"},
        ],
        "pass_threshold": 0.5,
    }
)


@pytest.mark.parametrize("bad", [1.5, -0.5, math.nan, math.inf, True, "1", 10**400, None])
def test_rubric_item_scores_outside_the_unit_interval_fail_the_item(tmp_path: Path, bad: object) -> None:
    score = score_rubric(SPEC, {"answer": 1.0, "style": bad}, judge=None, workspace=tmp_path, instruction="")
    assert score.bad_items == ["style"] and not score.passed and not score.hinges_on_judge
    assert score.scores() == {"answer": 1.0, "style": 0.0} and score.reward == 0.5
    assert score.to_dict()["bad_items"] == ["style"]
    assert "not a finite number in [0, 1]" in score.items[1].reason


def test_rubric_sound_item_scores_pass(tmp_path: Path) -> None:
    score = score_rubric(SPEC, {"answer": 1, "style": 0.0}, judge=None, workspace=tmp_path, instruction="")
    assert score.passed and score.bad_items == [] and score.reward == 0.5
