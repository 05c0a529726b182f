"""Over-long trajectories: drop, truncate at a turn boundary, or split into several examples.

A turn is an assistant message plus the tool results that answer it; the leading system and
user messages form the header every part keeps."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from skillgym_trainer.curation.records import Candidate
from skillgym_trainer.tokens import count_example

LengthMode = Literal["drop", "truncate", "split"]


@dataclass
class LengthReport:
    over_limit: int = 0
    dropped: int = 0
    truncated: int = 0
    split: int = 0
    parts: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, int]:
        return {
            "over_limit": self.over_limit,
            "dropped": self.dropped,
            "truncated": self.truncated,
            "split": self.split,
            "parts": self.parts,
        }


def header_and_turns(messages: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    index = 0
    while index < len(messages) and messages[index]["role"] in ("system", "user"):
        index += 1
    header = list(messages[:index])
    turns: list[list[dict[str, Any]]] = []
    for message in messages[index:]:
        if message["role"] == "assistant" or not turns:
            turns.append([message])
        else:
            turns[-1].append(message)
    return header, turns


def _trainable(turns: Sequence[Sequence[dict[str, Any]]]) -> bool:
    return any(m["role"] == "assistant" and m.get("weight", 1) for turn in turns for m in turn)


def _pack_turns(
    example: dict[str, Any],
    header: list[dict[str, Any]],
    turns: list[list[dict[str, Any]]],
    limit: int,
    count: Callable[[dict[str, Any]], int],
) -> list[list[list[dict[str, Any]]]]:
    """Greedy windows of consecutive turns that fit with the header."""
    windows: list[list[list[dict[str, Any]]]] = []
    current: list[list[dict[str, Any]]] = []
    for turn in turns:
        trial = [*current, turn]
        if current and count(_compose(example, header, trial)) > limit:
            windows.append(current)
            current = [turn]
        else:
            current = trial
    if current:
        windows.append(current)
    return windows


def _compose(
    example: dict[str, Any], header: list[dict[str, Any]], turns: Sequence[Sequence[dict[str, Any]]]
) -> dict[str, Any]:
    return {**example, "messages": [*header, *(m for turn in turns for m in turn)]}


def apply_length_limit(
    candidates: Sequence[Candidate],
    max_tokens: int | None,
    mode: LengthMode = "truncate",
    count: Callable[[dict[str, Any]], int] = count_example,
) -> tuple[list[Candidate], LengthReport]:
    report = LengthReport()
    if max_tokens is None:
        return list(candidates), report
    out: list[Candidate] = []
    for candidate in candidates:
        if count(candidate.example) <= max_tokens:
            out.append(candidate)
            continue
        report.over_limit += 1
        header, turns = header_and_turns(candidate.example["messages"])
        windows = [] if mode == "drop" else _pack_turns(candidate.example, header, turns, max_tokens, count)
        fitting = [w for w in windows if _trainable(w) and count(_compose(candidate.example, header, w)) <= max_tokens]
        if mode == "truncate" and windows and windows[0] in fitting:
            out.append(candidate.with_example(_compose(candidate.example, header, windows[0])))
            report.truncated += 1
        elif mode == "split" and fitting:
            for part, window in enumerate(fitting):
                out.append(candidate.with_example(_compose(candidate.example, header, window), part=part))
            report.split += 1
            report.parts += len(fitting)
        else:
            report.dropped += 1
    return out, report
