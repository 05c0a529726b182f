"""Each shortcut taken for speed gives exactly what the straightforward code gives."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from skillgym_ingest.annotate import quality
from skillgym_ingest.annotate.basic import _REFERENCE, _REFERENCE_ANCHORS
from skillgym_ingest.annotate.binaries import _SUBPROCESS, _SUBPROCESS_ANCHORS
from skillgym_ingest.annotate.rules import anchored_finditer, has_run
from skillgym_ingest.annotate.runtime import RUNTIME_RULES
from skillgym_ingest.annotate.safety import SAFETY_RULESET
from skillgym_ingest.content import _PROSE_WORD, _normalize, prose_words
from skillgym_ingest.frontmatter import _Loader, simple_mapping

PIECES = [
    "a", "Z", "use ", "Use this skill when", "when the user", "trigger", "triggers on", "mcp__x_y", "MCP server",
    "`Github:create-issue`", "`", "$", "${API_KEY}", "$TOKEN", "export FOO_BAR=1", "export", "fetch('https://x.io')",
    "axios.get", "https.get(", "http", "subprocess.run(['jq'", "os.system('ffmpeg", "exec(", "spawn('git'",
    "](scripts/run.py)", "`references/a.md`", "output", "outputs", "returns", "ready", "reads", "input", "given",
    " ", "  ", "\t", "\n", ".", "-", "_", "1", "é", "\u017f", "\u212a", "\u0130", "QUJD" * 20, "=", "#", ":", "x" * 5,
]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _spans(matches: object) -> list[tuple[tuple[int, int], tuple[str | None, ...]]]:
    return [(m.span(), m.groups()) for m in matches]  # type: ignore[attr-defined]


@settings(max_examples=300, deadline=None)
@given(texts)
def test_anchored_rules_find_what_finditer_finds(text: str) -> None:
    lowered = text.lower()
    for rule in RUNTIME_RULES.rules + SAFETY_RULESET.rules:
        if rule.anchors or rule.guard is not None:
            assert _spans(rule.finditer(text, lowered)) == _spans(rule.pattern.finditer(text)), rule.rule
    for pattern, anchors in ((_REFERENCE, _REFERENCE_ANCHORS), (_SUBPROCESS, _SUBPROCESS_ANCHORS)):
        assert _spans(anchored_finditer(pattern, text, text, anchors)) == _spans(pattern.finditer(text))


@settings(max_examples=300, deadline=None)
@given(texts)
def test_quality_signals_match_plain_searches(text: str) -> None:
    for pattern, anchors in ((quality._WHEN, quality._WHEN_ANCHORS), (quality._INPUT, quality._INPUT_ANCHORS),
                             (quality._OUTPUT, quality._OUTPUT_ANCHORS)):
        assert quality._found(pattern, text, anchors) == (pattern.search(text) is not None)
    assert quality._has_code_fence(text) == (quality._CODE_FENCE.search(text) is not None)
    assert (len(text.split(None, 79)) >= 80) == (len(text.split()) >= 80)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="AB+/=9 \n.é", max_size=700))
def test_run_guard_is_exact(text: str) -> None:
    assert has_run("AB+/9", 300)(text) == (re.search(r"[AB+/9]{300,}", text) is not None)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_prose_words_and_normalisation(text: str) -> None:
    assert prose_words(text.lower()) == _PROSE_WORD.findall(text.lower())
    lines = re.sub(r"[ \t]+", " ", text.lower()).split("\n")
    assert _normalize(text) == "\n".join(s for line in lines if (s := line.strip())).encode()


VALUES = ["a", "Use", "y", "n", "yes", "No", "on", "OFF", "null", "True", "~", "1", "1.5", "2024-01-02", ":", ": ",
          " #", "#", " ", "-", "- ", "'", '"', "[", "{", "&", "*", "!", "|", ">", "%", "@", "`", ".", "=", "<", ",",
          "?", "\\", "é", "\t", "key:", "a b"]
lines = st.tuples(
    st.sampled_from(["name", "description", "yes", "On", "x-y", "a_b", "k1", "null", "Key", "1a"]),
    st.sampled_from(["", "a", "Use", "y", "t", "N"]), st.lists(st.sampled_from(VALUES), max_size=6),
).map(lambda parts: f"{parts[0]}: {parts[1]}{''.join(parts[2])}")


@settings(max_examples=500, deadline=None)
@given(st.lists(lines, min_size=1, max_size=4))
def test_simple_front_matter_reads_as_yaml_does(block: list[str]) -> None:
    fast = simple_mapping(block)
    if fast is not None:
        loaded = yaml.load("\n".join(block), Loader=_Loader)
        assert fast == loaded and list(fast) == list(loaded)
        assert all(isinstance(value, str) for value in loaded.values())


@settings(max_examples=300, deadline=None)
@given(texts)
def test_new_triggers_cover_every_match(text: str) -> None:
    # Rules that used to run on every document now wait for a trigger; none may miss a match.
    for rule in RUNTIME_RULES.rules:
        if rule.rule in {"runtime.network.mcp", "runtime.env.shell"} and rule.pattern.search(text):
            assert any(trigger in text.lower() for trigger in rule.triggers), rule.rule


def test_triggers_cover_every_match_in_the_labelled_corpus() -> None:
    # A rule only runs where one of its triggers occurs, so a match without one would be lost.
    corpus = Path(__file__).parent / "corpus"
    texts = [path.read_text() for path in sorted(corpus.rglob("*")) if path.is_file() and path.suffix != ".json"]
    texts += [text.upper() for text in texts[:10]]
    for rule in RUNTIME_RULES.rules:
        if not rule.triggers:
            continue
        for text in texts:
            if rule.pattern.search(text):
                assert any(trigger in text.lower() for trigger in rule.triggers), rule.rule
