"""Reading a verifier's verdict from ``/logs/verifier``, written by code that may be hostile.

``reward.txt`` holds one number; ``reward.json`` an object of named numbers whose overall reward
is its ``reward`` key, else the mean of its values (Harbor's rule). Every number must be finite
and in [0, 1]. When both files are present they must agree: code the verifier runs could write
one after the checker wrote the other, so neither file outranks the other. Only regular files
of bounded size are read, never through a link, and no content makes the reader raise."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from skillgym_core.sandbox.workspace import read_regular_file

REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"
MAX_REWARD_FILE_BYTES = 64 * 1024
MAX_JSON_NESTING = 32
MAX_REWARD_KEYS = 256
MAX_KEY_CHARS = 128
AGREEMENT_TOLERANCE = 1e-6
EXCERPT_CHARS = 60

RewardFailure = Literal["reward_file_missing", "bad_reward", "reward_conflict"]

ASCII_WHITESPACE = " \t\n\r\f\v"
# float() alone would also take "nan", "inf", "1_000" and non-ASCII digits
DECIMAL_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
JSON_BRACKET = re.compile(r"[\[\]{}]")


@dataclass(frozen=True)
class RewardReading:
    """The verdict: ``reward`` and ``rewards`` when the files are sound, else ``failure`` says
    why (``reward_file_missing``, ``bad_reward`` or ``reward_conflict``) and ``detail`` explains."""

    reward: float | None
    rewards: dict[str, float] = field(default_factory=dict)
    failure: RewardFailure | None = None
    detail: str = ""

    @classmethod
    def failed(cls, failure: RewardFailure, detail: str) -> RewardReading:
        return cls(None, {}, failure, detail)


class _BadReward(Exception):
    """Internal: the reward files are malformed; the message is a short, bounded reason."""


def read_verdict(logs_verifier: Path, *, max_bytes: int = MAX_REWARD_FILE_BYTES) -> RewardReading:
    """The verdict in ``logs_verifier``; never raises, whatever the files hold."""
    try:
        return _read_verdict(logs_verifier, max_bytes)
    except _BadReward as exc:
        return RewardReading.failed("bad_reward", str(exc))
    except Exception as exc:  # whatever else hostile content provokes is still a bad reward, not a crash
        return RewardReading.failed("bad_reward", f"reward files could not be read ({type(exc).__name__})")


def read_reward(logs_verifier: Path) -> tuple[float, dict[str, float]] | None:
    """(reward, rewards), or None when the verdict is missing, malformed or conflicting."""
    reading = read_verdict(logs_verifier)
    return None if reading.reward is None else (reading.reward, reading.rewards)


def overall_reward(rewards: Mapping[str, float]) -> float:
    """The one reward named rewards stand for: their ``reward`` key, else the mean of their values."""
    if "reward" in rewards:
        return rewards["reward"]
    return math.fsum(rewards.values()) / len(rewards) if rewards else 0.0


def _read_verdict(logs_verifier: Path, max_bytes: int) -> RewardReading:
    if logs_verifier.is_symlink():
        raise _BadReward("the verifier's log directory is a link")
    raw_txt = _read_reward_file(logs_verifier / REWARD_TXT, max_bytes)
    raw_json = _read_reward_file(logs_verifier / REWARD_JSON, max_bytes)
    txt_reward = None if raw_txt is None else _parse_reward_txt(raw_txt)
    if raw_json is None:
        if txt_reward is None:
            return RewardReading.failed("reward_file_missing", "the verifier wrote neither reward.txt nor reward.json")
        return RewardReading(txt_reward, {"reward": txt_reward})
    rewards = _parse_reward_json(raw_json)
    json_reward = overall_reward(rewards)
    if txt_reward is not None and abs(txt_reward - json_reward) > AGREEMENT_TOLERANCE:
        detail = f"reward.txt says {txt_reward!r} but reward.json says {json_reward!r}"
        return RewardReading.failed("reward_conflict", detail)
    return RewardReading(json_reward, rewards)


def _read_reward_file(path: Path, max_bytes: int) -> bytes | None:
    """The file's bytes; None when nothing is there. Anything but a small regular file is bad."""
    try:
        info = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        raise _BadReward(f"{path.name} cannot be inspected ({type(exc).__name__})") from exc
    if not stat.S_ISREG(info.st_mode):
        raise _BadReward(f"{path.name} is not a regular file")
    data = read_regular_file(path, max_bytes=max_bytes)
    if data is None:
        raise _BadReward(f"{path.name} is larger than {max_bytes} bytes or not a regular file")
    return data


def _decode(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _BadReward(f"{name} is not UTF-8 text") from exc


def _excerpt(text: str) -> str:
    return repr(text[:EXCERPT_CHARS]) + ("..." if len(text) > EXCERPT_CHARS else "")


def _unit_interval(value: float, where: str) -> float:
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise _BadReward(f"{where} is {value!r}, not a finite number in [0, 1]")
    return value + 0.0  # -0.0 reads as 0.0


def _parse_reward_txt(data: bytes) -> float:
    text = _decode(data, REWARD_TXT).strip(ASCII_WHITESPACE)
    if not DECIMAL_NUMBER.fullmatch(text):
        raise _BadReward(f"reward.txt must hold exactly one decimal number, not {_excerpt(text)}")
    return _unit_interval(float(text), REWARD_TXT)


def _nesting_depth(text: str, limit: int) -> int:
    """How deep brackets nest outside string literals, counting no further than ``limit + 1``."""
    depth = deepest = 0
    for match in JSON_BRACKET.finditer(JSON_STRING.sub("", text)):
        depth += 1 if match.group() in "[{" else -1
        deepest = max(deepest, depth)
        if deepest > limit:
            break
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("an object repeats a key")
    return dict(pairs)


def _parse_reward_json(data: bytes) -> dict[str, float]:
    text = _decode(data, REWARD_JSON)
    if _nesting_depth(text, MAX_JSON_NESTING) > MAX_JSON_NESTING:
        raise _BadReward(f"reward.json nests deeper than {MAX_JSON_NESTING} levels")
    try:
        # integers parse as floats: a 400-digit literal becomes inf (rejected below), never a huge int
        parsed = json.loads(text, parse_int=float, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except (ValueError, RecursionError, OverflowError) as exc:
        raise _BadReward(f"reward.json is not valid JSON: {str(exc)[: EXCERPT_CHARS * 2]}") from exc
    if not isinstance(parsed, dict):
        raise _BadReward(f"reward.json must be a JSON object, not {type(parsed).__name__}")
    if not parsed:
        raise _BadReward("reward.json holds no rewards")
    if len(parsed) > MAX_REWARD_KEYS:
        raise _BadReward(f"reward.json holds {len(parsed)} keys, more than {MAX_REWARD_KEYS}")
    rewards: dict[str, float] = {}
    for key, value in parsed.items():
        where = f"reward.json[{_excerpt(key)}]"
        if len(key) > MAX_KEY_CHARS:
            raise _BadReward(f"{where}: keys are at most {MAX_KEY_CHARS} characters")
        if not isinstance(value, float):  # bools, strings, null, arrays and objects are not rewards
            raise _BadReward(f"{where} is a {type(value).__name__}, not a number")
        rewards[key] = _unit_interval(value, where)
    return rewards
