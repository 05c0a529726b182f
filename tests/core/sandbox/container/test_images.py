"""Resolving a Dockerfile's bases against the local set, and the content key of a build context."""

from __future__ import annotations

from pathlib import Path

import pytest
from skillgym_core.envbuild.provider import EnvironmentBuildError
from skillgym_core.sandbox.container.images import (
    DEBIAN_BASE,
    PYTHON_BASE,
    context_digest,
    nearest_base,
    resolve_from_lines,
)


@pytest.mark.parametrize(("reference", "local"), [
    ("python:3.11-slim", PYTHON_BASE), ("docker.io/library/python:3.12", PYTHON_BASE), ("python", PYTHON_BASE),
    ("debian:bookworm-slim", DEBIAN_BASE), ("ubuntu:24.04", DEBIAN_BASE), ("localhost:5000/ubuntu:22.04", DEBIAN_BASE),
    ("ghcr.io/org/tool:1.0", None), ("node:20", None), ("pythonista:1", None),
])
def test_the_nearest_local_base_is_chosen_by_repository_name(reference: str, local: str | None) -> None:
    assert nearest_base(reference) == local


def test_only_bases_the_engine_lacks_are_replaced_and_stage_names_are_left_alone() -> None:
    dockerfile = ("FROM --platform=linux/amd64 python:3.11-slim AS build\nRUN echo hi\n"
                  "FROM build\nFROM localhost/have:1\nCOPY --from=build /x /x\n")
    text, substitutions = resolve_from_lines(dockerfile, exists=lambda ref: ref == "localhost/have:1")
    assert substitutions == {"python:3.11-slim": PYTHON_BASE}
    assert text.splitlines()[0] == f"FROM --platform=linux/amd64 {PYTHON_BASE} AS build"
    assert text.splitlines()[2:4] == ["FROM build", "FROM localhost/have:1"]


def test_a_base_with_no_local_stand_in_is_a_typed_error() -> None:
    with pytest.raises(EnvironmentBuildError) as caught:
        resolve_from_lines("FROM node:20\n", exists=lambda ref: False)
    assert caught.value.reason == "base_image_unavailable"
    assert caught.value.details["image"] == "node:20"


def test_the_content_key_changes_with_any_file_mode_or_base(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM python:3.11\n")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.txt").write_text("a")
    first = context_digest(tmp_path, "FROM x\n", {})
    assert context_digest(tmp_path, "FROM x\n", {}) == first
    (tmp_path / "data" / "a.txt").write_text("b")
    second = context_digest(tmp_path, "FROM x\n", {})
    (tmp_path / "data" / "a.txt").chmod(0o755)
    third = context_digest(tmp_path, "FROM x\n", {})
    assert len({first, second, third, context_digest(tmp_path, "FROM x\n", {"x": "y"})}) == 4
