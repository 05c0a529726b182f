"""brand-restyle: a page, its stylesheet, SVG charts, a matplotlib style and a python-pptx deck made
with off-brand colours and fonts, restyled to the brand the skill describes."""

from __future__ import annotations

import re
import sys
import types
import zipfile
from pathlib import Path
from typing import Any

import pytest
from skillgym_builder.families import brand_facts
from skillgym_builder.families.brand_restyle import BrandRestyleFamily, facts_helper
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider, lint_environment

from tests.builder.family_support import (
    BuiltTask,
    assert_reviewer_approves,
    assert_weakened_verifier_rejected,
    build,
    card_for,
)

KNOBS = {"record_count": 8, "noise_level": 0.6, "distractor_files": 1, "multi_step": 1, "long_horizon": 3}
CSS, HTML, SVG = "out/site/styles.css", "out/site/index.html", "out/charts/orders-by-channel.svg"
STYLE, DECK = "out/styles/report.mplstyle", "out/deck/quarterly-review.pptx"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, env_provider: LocalVenvProvider) -> BuiltTask:
    card = card_for("studio-palette", "graphic-design")
    return build(BrandRestyleFamily(), card, KNOBS, tmp_path_factory.mktemp("brand"), env_provider)


@pytest.fixture(scope="module")
def solved(built: BuiltTask) -> Path:
    ok, workspace = built.solve()
    assert ok
    return workspace


def test_fit_and_the_reason_a_testing_skill_does_not_fit() -> None:
    family = BrandRestyleFamily()
    assert family.suitability(card_for("studio-palette", "graphic-design")).code == "subcategory"
    by_terms = assess(family.spec, SkillEvidence.of(card_for("studio-palette", "frontend-ui", category="development")))
    assert by_terms.fits and by_terms.code == "terms"
    verdict = family.suitability(card_for("tdd-workflow", "testing-qa", category="development"))
    assert not verdict.fits and verdict.code == "subcategory_not_served" and "testing-qa" in verdict.reason


def test_the_brand_is_read_from_the_skill_and_the_solution_helper_agrees() -> None:
    card = card_for("studio-palette", None)
    brand = brand_facts.read_brand(card.skill_md)
    assert brand is not None
    assert brand.roles == {"text": "#2b2d42", "background": "#fbfaf8", "surface": "#edf2f4", "muted": "#8d99ae"}
    assert brand.accents == ["#3a5a98", "#f4a259", "#ef233c"]  # rank order, not listed order
    assert brand.fonts == {"heading": ["Space Grotesk", "Helvetica"], "body": ["Literata", "Georgia"]}
    module = types.ModuleType("brandfacts_helper")
    sys.modules[module.__name__] = module
    try:
        exec(facts_helper()["brandfacts.py"], module.__dict__)  # the helper the reference solutions import
        module.glob = types.SimpleNamespace(glob=lambda pattern: [str(card.root / "SKILL.md")])  # type: ignore[attr-defined]
        helper = module.installed_brand()
    finally:
        del sys.modules[module.__name__]
    assert (helper.roles, helper.accents, helper.fonts) == (brand.roles, brand.accents, brand.fonts)
    assert brand_facts.read_brand(card_for("poster-layout", None).skill_md) is None


def test_knobs_change_the_instance() -> None:
    family, card = BrandRestyleFamily(), card_for("studio-palette", "graphic-design")
    easy = family.instantiate(card, 0, {})
    assert set(easy.workspace) == {"site/index.html", "site/styles.css", "charts/orders-by-channel.svg",
                                   "design/style-roles.md"} and not easy.render_jobs
    more = family.instantiate(card, 0, {"record_count": 14})
    assert more.workspace["site/styles.css"].count(b".swatch-") == 14
    noisy = family.instantiate(card, 0, {"noise_level": 0.6}).workspace
    assert re.search(rb"rgb\(|style=\"(fill|stroke)", noisy["charts/orders-by-channel.svg"])
    assert b'id="promo"' in noisy["site/index.html"]
    assert "design/legacy-brand.md" in family.instantiate(card, 0, {"distractor_files": 1}).workspace
    deck = family.instantiate(card, 0, {"multi_step": 1})
    assert [job.produces for job in deck.render_jobs] == [("deck/quarterly-review.pptx",)]
    long = family.instantiate(card, 0, {"long_horizon": 3}).workspace
    assert {"styles/report.mplstyle", "charts/review-flow.svg"} <= set(long)


def test_a_skill_without_a_brand_gets_the_brief_and_claims_nothing() -> None:
    output = BrandRestyleFamily().instantiate(card_for("poster-layout", "graphic-design"), 0, {})
    assert output.metadata["skill_claim"]["claimed"] is False
    assert "design/brand.md" in output.workspace and "/app/design/brand.md" in output.instruction


def test_task_conforms_and_the_untouched_workspace_fails(built: BuiltTask) -> None:
    assert check_task(built.task.root) == []
    assert lint_environment(built.task) == []
    assert not built.untouched().passed
    assert (built.task.workspace / "deck" / "quarterly-review.pptx").read_bytes()[:2] == b"PK"
    protected = {p.path for p in built.metadata.protected_inputs}
    assert {"deck/quarterly-review.pptx", "site/styles.css", "design/style-roles.md"} <= protected


def test_reference_and_custom_property_alternative_pass(built: BuiltTask, solved: Path) -> None:
    assert built.verify(solved).passed
    ok, alternative = built.solve("alternatives/css-custom-properties.sh")
    assert ok and built.verify(alternative).passed
    assert "var(--brand-" in (alternative / CSS).read_text()


def test_the_skill_is_needed(built: BuiltTask) -> None:
    dependence = built.extra("skill_dependence")
    assert dependence["claimed"] is True and dependence["holds"] is True
    assert set(dependence["facts"]) >= {"accents", "text", "heading_font"}


def _sub(rel: str, old: str, new: str, count: int = 1) -> Any:
    def edit(workspace: Path) -> None:
        text = (workspace / rel).read_text()
        assert old in text, (rel, old)
        (workspace / rel).write_text(text.replace(old, new, count))

    return edit


def _swap_first_two_accents(workspace: Path) -> None:
    text = (workspace / SVG).read_text()
    first, second = (re.search(rf'<rect id="bar-{k}"[^>]*>', text) for k in (1, 2))
    assert first and second
    one, two = (re.search(r"#\w{6}", tag.group(0)).group(0) for tag in (first, second))  # type: ignore[union-attr]
    swapped = first.group(0).replace(one, two), second.group(0).replace(two, one)
    (workspace / SVG).write_text(text.replace(first.group(0), swapped[0]).replace(second.group(0), swapped[1]))


def _drop_fallback(workspace: Path) -> None:
    text = (workspace / CSS).read_text()
    (workspace / CSS).write_text(re.sub(r"(font-family: [^,;]+), Georgia", r"\1", text, count=1))


def _legacy_color(workspace: Path) -> None:
    text = (workspace / STYLE).read_text()
    (workspace / STYLE).write_text(re.sub(r"figure.facecolor: \w+", "figure.facecolor: ffffff", text))


def _reworded(workspace: Path) -> None:
    text = (workspace / HTML).read_text()
    (workspace / HTML).write_text(text.replace("Faster sync", "Quicker sync"))


def _vendor_restyled(workspace: Path) -> None:
    (workspace / "out/site/vendor").mkdir(parents=True)
    (workspace / "out/site/vendor/normalize.css").write_text("html { color: #2b2d42; }\n")


def _deck_shape_unstyled(workspace: Path) -> None:
    with zipfile.ZipFile(workspace / DECK) as archive:
        parts = {info.filename: archive.read(info.filename) for info in archive.infolist()}
    slide = parts["ppt/slides/slide1.xml"].decode()
    shape = re.search(r'<p:sp>(?:(?!</p:sp>).)*name="s1-shape-1".*?</p:sp>', slide, re.S)
    assert shape
    changed = re.sub(r'srgbClr val="\w+"', 'srgbClr val="123456"', shape.group(0), count=1)
    parts["ppt/slides/slide1.xml"] = slide.replace(shape.group(0), changed).encode()
    with zipfile.ZipFile(workspace / DECK, "w") as archive:
        for name, data in parts.items():
            archive.writestr(name, data)


@pytest.mark.parametrize(("name", "change"), [
    ("accents out of the brand's order", _swap_first_two_accents),
    ("a font without its fallback", _drop_fallback),
    ("an off-palette colour left in the style file", _legacy_color),
    ("the copy reworded", _reworded),
    ("a decoy stylesheet restyled too", _vendor_restyled),
    ("a declaration dropped", _sub(CSS, "  border-radius: 8px;\n", "")),
    ("geometry changed", _sub(SVG, 'width="40"', 'width="44"')),
    ("text on the page coloured as a shape", _sub(CSS, "color: #2b2d42", "color: #3a5a98")),
])
def test_wrong_but_plausible_restylings_are_rejected(built: BuiltTask, solved: Path, name: str, change: Any) -> None:
    assert not built.verify_edited(solved, change).passed, name


def test_a_deck_shape_left_off_brand_is_rejected(built: BuiltTask, solved: Path) -> None:
    assert not built.verify_edited(solved, _deck_shape_unstyled).passed


def test_tampering_with_a_protected_input_is_rejected(built: BuiltTask, solved: Path) -> None:
    assert not built.verify_edited(solved, _sub("site/styles.css", "padding: 16px", "padding: 17px")).passed


def test_colour_notation_and_whitespace_do_not_matter(built: BuiltTask, solved: Path) -> None:
    def rewrite(workspace: Path) -> None:
        text = (workspace / CSS).read_text().replace("#2b2d42", "rgb(43, 45, 66)").replace("#fbfaf8", "#FBFAF8")
        (workspace / CSS).write_text(text.replace(": ", ":   "))

    assert built.verify_edited(solved, rewrite).passed


@pytest.mark.slow
def test_the_reviewer_approves_the_task_built_for_the_seed_skill(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_reviewer_approves(tmp_path, env_provider, "brand-restyle")


@pytest.mark.slow
def test_a_weakened_verifier_is_rejected_by_the_reviewer(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    assert_weakened_verifier_rejected(tmp_path, env_provider, "brand-restyle")
