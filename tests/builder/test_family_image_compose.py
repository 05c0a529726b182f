"""image-compose: photo batches drawn with Pillow (thumbnails, contact sheet, GIF frames) and
seeded generative sketches run as untrusted code with hidden seeds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families.art_facts import read_conventions
from skillgym_builder.families.image_compose import ImageComposeFamily
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
    read_json,
    rewrite_json,
)

PROCESSING = {"record_count": 6, "noise_level": 0.5, "distractor_files": 1, "error_recovery": 1, "multi_step": 1,
              "long_horizon": 2}
GENERATIVE = {"record_count": 3, "noise_level": 0.5, "distractor_files": 1, "error_recovery": 1, "multi_step": 1,
              "long_horizon": 2}


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("photo-batch", "image-processing")
    return build(ImageComposeFamily(), card, PROCESSING, tmp_path_factory.mktemp("photos"), env_provider)


@pytest.fixture(scope="module")
def photos_solved(photos: BuiltTask) -> Path:
    ok, workspace = photos.solve()
    assert ok
    return workspace


@pytest.fixture(scope="module")
def art(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("noise-gardens", "generative-art")
    return build(ImageComposeFamily(), card, GENERATIVE, tmp_path_factory.mktemp("art"), env_provider)


@pytest.fixture(scope="module")
def art_solved(art: BuiltTask) -> Path:
    ok, workspace = art.solve()
    assert ok
    return workspace


def test_fit_kinds_and_a_non_fit() -> None:
    family = ImageComposeFamily()
    assert family.suitability(card_for("photo-batch", "image-processing")).code == "subcategory"
    assert family.kind(card_for("photo-batch", "image-processing")) == "processing"
    assert family.kind(card_for("noise-gardens", "graphic-design")) == "generative"
    verdict = family.suitability(card_for("config-layers", "ci-cd", category="devops"))
    assert not verdict.fits and verdict.code == "subcategory_not_served"


def test_the_skills_conventions_are_read() -> None:
    conventions = read_conventions(card_for("noise-gardens", None).skill_md)
    assert conventions is not None
    assert (conventions["canvas"], conventions["default_seed"]) == ([720, 720], 77)
    assert read_conventions(card_for("photo-batch", None).skill_md) is None


def test_knobs_change_the_instance() -> None:
    family, card = ImageComposeFamily(), card_for("photo-batch", "image-processing")
    easy = family.instantiate(card, 0, {})
    photos = easy.render_jobs[0].params["photos"]
    assert len(photos) == 3 and {p["mode"] for p in photos} == {"RGB"} and not any(p["truncated"] for p in photos)
    assert set(json.loads(easy.workspace["jobs/spec.json"])) == {"thumbnails"}
    assert len(family.instantiate(card, 0, {"record_count": 10}).render_jobs[0].params["photos"]) == 10
    assert any(p["truncated"] for p in family.instantiate(card, 0, {"error_recovery": 1}).render_jobs[0].params["photos"])
    assert "contact_sheet" in json.loads(family.instantiate(card, 0, {"multi_step": 1}).workspace["jobs/spec.json"])
    assert "animation" in family.instantiate(card, 0, {"long_horizon": 2}).render_jobs[0].params
    assert "photos/README.txt" in family.instantiate(card, 0, {"distractor_files": 1}).workspace
    art_card = card_for("noise-gardens", "generative-art")
    brief = json.loads(family.instantiate(art_card, 0, {"noise_level": 0.5}).workspace["art/brief.json"])
    assert brief["coverage"] == [0.3, 0.6] and "canvas" not in brief


def test_processing_task_conforms_and_passes_both_ways(photos: BuiltTask, photos_solved: Path) -> None:
    assert check_task(photos.task.root) == [] and lint_environment(photos.task) == []
    assert not photos.untouched().passed
    assert photos.verify(photos_solved).passed
    ok, alternative = photos.solve("alternatives/numpy-arrays.sh")
    assert ok and photos.verify(alternative).passed
    assert photos.extra("skill_dependence")["claimed"] is False


def _stretched_thumbnail(workspace: Path) -> None:
    from PIL import Image

    path = next((workspace / "out/thumbs").glob("*.jpg"))
    box = read_json(workspace, "jobs/spec.json")["thumbnails"]["box"]
    Image.open(path).resize(tuple(box)).save(path, "JPEG", quality=95)


def _reversed_sheet(workspace: Path) -> None:
    from PIL import Image, ImageOps

    path = workspace / "out/contact_sheet.png"
    ImageOps.mirror(Image.open(path).convert("RGB")).save(path)


def _png_named_jpg(workspace: Path) -> None:
    from PIL import Image

    path = next((workspace / "out/thumbs").glob("*.jpg"))
    Image.open(path).save(path, "PNG")


def _last_frame_missing(workspace: Path) -> None:
    sorted((workspace / "out/frames").glob("frame_*.png"))[-1].unlink()


@pytest.mark.parametrize(("name", "change"), [
    ("a thumbnail stretched to the box", _stretched_thumbnail),
    ("the contact sheet mirrored", _reversed_sheet),
    ("a PNG saved under a .jpg name", _png_named_jpg),
    ("the last GIF frame missing", _last_frame_missing),
    ("the truncated photo not reported", rewrite_json("out/report.json", lambda r: r.update(skipped=[]))),
    ("durations in seconds", rewrite_json("out/report.json", lambda r: r["frames"].update(
        durations_ms=[d / 1000 for d in r["frames"]["durations_ms"]]))),
])
def test_wrong_processing_outputs_are_rejected(photos: BuiltTask, photos_solved: Path, name: str, change: Any) -> None:
    pytest.importorskip("PIL")
    assert not photos.verify_edited(photos_solved, change).passed, name


def test_tampered_photos_are_rejected(photos: BuiltTask, photos_solved: Path) -> None:
    def tamper(workspace: Path) -> None:
        path = next((workspace / "photos").glob("*.png"))
        path.write_bytes(path.read_bytes() + b"\0")

    assert not photos.verify_edited(photos_solved, tamper).passed


@pytest.mark.slow
def test_generative_task_conforms_passes_and_needs_the_skill(art: BuiltTask, art_solved: Path) -> None:
    assert check_task(art.task.root) == [] and lint_environment(art.task) == []
    assert not art.untouched().passed
    assert art.verify(art_solved).passed
    ok, alternative = art.solve("alternatives/numpy-cells.sh")
    assert ok and art.verify(alternative).passed
    dependence = art.extra("skill_dependence")
    assert dependence["claimed"] is True and dependence["holds"] is True


def _sketch(old: str, new: str) -> Any:
    def edit(workspace: Path) -> None:
        text = (workspace / "art/sketch.py").read_text()
        assert re.search(old, text), old
        (workspace / "art/sketch.py").write_text(re.sub(old, new, text, count=1))

    return edit


def _gallery_swapped(workspace: Path) -> None:
    first, second = sorted((workspace / "out/gallery").glob("seed-*.png"))[:2]
    data = first.read_bytes()
    first.write_bytes(second.read_bytes())
    second.write_bytes(data)


@pytest.mark.parametrize(("name", "change"), [
    ("an unseeded generator", _sketch(r"random\.Random\(args\.seed\)", "random.Random()")),
    ("a different default seed", _sketch(r"DEFAULT_SEED = \d+", "DEFAULT_SEED = 1")),
    ("the brief's old canvas", _sketch(r"CANVAS = \(\d+, \d+\)", "CANVAS = (640, 480)")),
    ("density ignored", _sketch(r"min\(1\.0, max\(0\.0, args\.density\)\)", "0.5")),
    ("soft edges", _sketch(r'image\.save\(args\.out, format="PNG"\)',
                           'image.resize((CANVAS[0] // 2, CANVAS[1] // 2)).resize(CANVAS, 2).save(args.out, format="PNG")')),
    ("gallery files swapped", _gallery_swapped),
])
def test_wrong_sketches_are_rejected(art: BuiltTask, art_solved: Path, name: str, change: Any) -> None:
    assert not art.verify_edited(art_solved, change).passed, name


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "image-compose")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "image-compose")
