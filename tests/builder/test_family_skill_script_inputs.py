"""skill-script beyond CSV: a skill's script that reads Markdown, JSON, YAML, a log or a project
directory, in Python or shell, is read for its input kind, given generated inputs of that kind,
and run in the sandbox to set the expectation."""

from __future__ import annotations

import json
import random
import textwrap
from pathlib import Path

import pytest
from skillgym_builder.families import script_documents
from skillgym_builder.families.script_cli import INPUT, ScriptUnusable, analyse
from skillgym_builder.families.script_purpose import stated_goal
from skillgym_builder.families.skill_script import SkillScriptFamily, material
from skillgym_core.conformance import check_task
from skillgym_core.envbuild import LocalVenvProvider

from tests.builder.family_support import build, card_for, write_skill

KNOBS = {"record_count": 40, "noise_level": 0.1, "distractor_files": 1, "long_horizon": 2}


TOC_MD = """\
    ---
    name: doc-outline
    description: Outlines Markdown documents.
    ---
    # Outline
    Run `python3 scripts/outline.py notes.md --depth 2 --format json` to list a document's sections.

    ```python
    print("an example the document may quote")
    ```
"""
TOC_PY = """\
    import argparse, json, re
    p = argparse.ArgumentParser()
    p.add_argument("document")
    p.add_argument("--depth", type=int, default=3)
    p.add_argument("--format", default="text")
    a = p.parse_args()
    sections, fenced = [], False
    for line in open(a.document, encoding="utf-8"):
        if line.startswith("```"):
            fenced = not fenced
        m = None if fenced else re.match(r"^(#{1,6}) (.*)", line)
        if m and len(m.group(1)) <= a.depth:
            sections.append({"level": len(m.group(1)), "title": m.group(2).strip()})
    print(json.dumps({"sections": sections, "count": len(sections)}))
"""
PAGES_PY = """\
    import os, sys
    for folder, _, names in os.walk(sys.argv[1]):
        for name in names:
            if name.endswith(".html"):
                text = open(os.path.join(folder, name)).read()
                print(name, "missing-alt" if "<img" in text and "alt=" not in text else "ok", text.count("<h2>"))
"""
PAGE_PY = """\
    import re, sys
    from html.parser import HTMLParser
    class Audit(HTMLParser):
        def __init__(self):
            super().__init__()
            self.found = {"headings": 0, "images_without_alt": 0, "links": 0}
        def handle_starttag(self, tag, attrs):
            names = dict(attrs)
            if re.fullmatch(r"h[1-6]", tag):
                self.found["headings"] += 1
            if tag == "img" and "alt" not in names:
                self.found["images_without_alt"] += 1
            if tag == "a":
                self.found["links"] += 1
    audit = Audit()
    audit.feed(open(sys.argv[1], encoding="utf-8").read())
    print(audit.found)
"""
LOG_SH = """\
    #!/usr/bin/env bash
    set -euo pipefail
    grep -c ' ERROR ' "$1" || true
    awk '{print $2}' "$1" | sort | uniq -c | sort -k2
"""


def test_the_input_kind_is_read_from_the_example_and_option_values_are_not_inputs(tmp_path: Path) -> None:
    call = analyse(card_for("outline", "docs", folder=write_skill(tmp_path / "s", TOC_MD, {"scripts/outline.py": TOC_PY})))
    assert call.input_kind == "markdown" and call.example_stem == "notes"
    assert call.argv == (INPUT, "--depth", "2", "--format", "json") and call.output_kind == "json"


def test_an_output_option_that_names_a_format_is_not_a_file(tmp_path: Path) -> None:
    skill_md = "---\nname: s\ndescription: d\n---\nRun `python3 scripts/check.py . --output markdown`.\n"
    script = "import os, sys\nfor f, _, names in os.walk(sys.argv[1]):\n    print(f, len(names))\n"
    call = analyse(card_for("s", None, folder=write_skill(tmp_path / "s", skill_md, {"scripts/check.py": script})))
    assert call.argv == (INPUT, "--output", "markdown") and not call.writes_file and call.input_kind == "tree"


def test_a_directory_argument_and_the_files_the_script_looks_for(tmp_path: Path) -> None:
    script = ("import argparse, os\np = argparse.ArgumentParser()\np.add_argument('site_dir', help='the site folder')\n"
              "for folder, _, names in os.walk(p.parse_args().site_dir):\n"
              "    print(sorted(n for n in names if n.endswith('.html')))\n")
    call = analyse(card_for("pages", None, folder=write_skill(tmp_path / "s", "---\nname: p\ndescription: d\n---\n", {"audit.py": script})))
    assert call.input_kind == "tree" and call.origin == "argparse" and ".html" in call.mentions
    files = material(call, "data/site", random.Random(1), 40, 0.0)
    assert any(rel.startswith("data/site/") and rel.endswith(".html") for rel in files)


def test_json_records_under_a_key_and_a_document_read_by_its_keys(tmp_path: Path) -> None:
    records = ("import json, sys\ndata = json.load(open(sys.argv[1]))\n"
               "print(sum(float(r['amount']) for r in data['payments'] if r.get('status') == 'open'))\n")
    call = analyse(card_for("pay", None, folder=write_skill(tmp_path / "a", "---\nname: p\ndescription: d\n---\n", {"s.py": records})))
    assert call.input_kind == "json" and call.container == "payments"
    assert {c.name for c in call.columns} == {"amount", "status"}
    loaded = json.loads(material(call, "data/p.json", random.Random(2), 30, 0.0)["data/p.json"])
    assert set(loaded) == {"payments"} and isinstance(loaded["payments"][0]["amount"], float)

    manifest = ("import json, sys\npkg = json.load(open(sys.argv[1]))\ndeps = pkg.get('dependencies', {})\n"
                "print(pkg.get('name'), len(deps), sorted(deps))\n")
    call = analyse(card_for("deps", None, folder=write_skill(tmp_path / "b", "---\nname: p\ndescription: d\n---\n", {"s.py": manifest})))
    assert dict(call.document) == {"dependencies": "mapping", "name": "value"}
    loaded = json.loads(material(call, "data/p.json", random.Random(3), 30, 0.0)["data/p.json"])
    assert isinstance(loaded["dependencies"], dict) and loaded["dependencies"] and isinstance(loaded["name"], str)


def test_a_shell_script_runs_as_its_skill_shows_it(tmp_path: Path) -> None:
    skill_md = "---\nname: logs\ndescription: d\n---\nCount errors with `bash scripts/errors.sh app.log`.\n"
    call = analyse(card_for("logs", None, folder=write_skill(tmp_path / "s", skill_md, {"scripts/errors.sh": LOG_SH})))
    assert call.interpreter == "bash" and call.input_kind == "log" and call.argv == (INPUT,)
    assert call.command("/skills/logs/scripts/errors.sh", "data/a.log", "out/a.txt")[:2] == ["bash", "/skills/logs/scripts/errors.sh"]


@pytest.mark.parametrize(("skill_md", "code"), [
    ("Run `python3 scripts/tool.py scan.pdf inventory.json`.", "script_reads_no_input"),
    ("Run `bash scripts/tool.sh report.csv`.", "script_input_kind"),
])
def test_inputs_tasks_cannot_generate_are_refused_with_the_reason(tmp_path: Path, skill_md: str, code: str) -> None:
    script = "tool.sh" if "bash" in skill_md else "tool.py"
    folder = write_skill(tmp_path / "s", f"---\nname: t\ndescription: d\n---\n{skill_md}\n",
                    {f"scripts/{script}": "import sys\nprint(sys.argv)\n" if script.endswith(".py") else "echo \"$1\"\n"})
    with pytest.raises(ScriptUnusable) as caught:
        analyse(card_for("t", None, folder=folder))
    assert caught.value.code == code


def test_generated_documents_follow_the_seed_and_carry_the_skills_examples() -> None:
    snippets = script_documents.fenced_blocks(textwrap.dedent(TOC_MD))
    assert snippets == [("python", 'print("an example the document may quote")')]
    first = script_documents.markdown(random.Random(5), 400, 0.3, snippets)
    assert first == script_documents.markdown(random.Random(5), 400, 0.3, snippets)
    assert first != script_documents.markdown(random.Random(6), 400, 0.3, snippets)
    assert snippets[0][1] in first and first.count("\n## ") >= 3
    log = script_documents.log(random.Random(1), 50, 0.0)
    assert len(log.splitlines()) == 50 and " INFO " in log


@pytest.mark.parametrize(("name", "skill_md", "scripts", "kind"), [
    ("outline", TOC_MD, {"scripts/outline.py": TOC_PY}, "markdown"),
    ("page-audit", "---\nname: page-audit\ndescription: d\n---\nAudit a page with `python3 scripts/audit.py page.html`.\n",
     {"scripts/audit.py": PAGE_PY}, "html"),
    ("logs", "---\nname: logs\ndescription: d\n---\nCount errors with `bash scripts/errors.sh app.log`.\n",
     {"scripts/errors.sh": LOG_SH}, "log"),
])
def test_a_task_is_built_on_generated_inputs_and_its_reference_passes(
        tmp_path: Path, env_provider: LocalVenvProvider, name: str, skill_md: str, scripts: dict[str, str], kind: str) -> None:
    card = card_for(name, None, folder=write_skill(tmp_path / "s", skill_md, scripts))
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=2)
    assert check_task(built.task.root) == []
    assert built.extra("skill_script")["input_kind"] == kind
    assert next(iter(scripts)).split("/")[-1] not in built.task.instruction()
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    assert not built.untouched().passed


def test_an_order_that_follows_the_directory_listing_is_not_asked_for(tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    skill_md = "---\nname: pages\ndescription: d\n---\nAudit a site with `python3 audit.py ./site`.\n"
    card = card_for("pages", None, folder=write_skill(tmp_path / "s", skill_md, {"audit.py": PAGES_PY}))
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=4)
    expected = json.loads((built.task.tests / "expected.json").read_text())
    assert "order" not in expected["items"]
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed


WORDS_MD = "---\nname: word-counts\ndescription: d\n---\nCount words with `python3 scripts/words.py notes.md`.\n"
WORDS_PY = '''\
    """Count how often each word occurs in a document.

    Usage: python3 words.py FILE [--format json]
    """
    import argparse, collections, json, re
    p = argparse.ArgumentParser()
    p.add_argument("document")
    p.add_argument("--format", default="text")
    a = p.parse_args()
    counts = collections.Counter(re.findall(r"[a-z]+", open(a.document).read().lower()))
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:15]
    print(json.dumps(dict(ranked)) if a.format == "json" else "\\n".join(f"{w} {n}" for w, n in ranked))
'''


@pytest.mark.parametrize(("text", "goal"), [
    ("Summarise sales by region and month.\n\nUsage: python3 sales.py data.csv", "Summarise sales by region and month."),
    ("Run sales_report.py on an export. Totals per region.", "Totals per region."),
    ("Flags rows over budget. Pass --strict to fail on warnings.", "Flags rows over budget."),
    ("A Python helper that ranks the command-line tools in a manifest.", "A Python helper that ranks the command-line tools in a manifest."),
    ("usage: sales.py [-h] FILE", ""),
])
def test_the_goal_is_stated_in_the_authors_words_without_the_command(text: str, goal: str) -> None:
    assert stated_goal(text, "scripts/sales_report.py" if "sales_report" in text else "scripts/sales.py") == goal


def test_a_result_that_turns_out_to_be_text_is_asked_for_as_text_in_a_text_file(
        tmp_path: Path, env_provider: LocalVenvProvider) -> None:
    card = card_for("word-counts", None, folder=write_skill(tmp_path / "s", WORDS_MD, {"scripts/words.py": WORDS_PY}))
    assert analyse(card).purpose == "Count how often each word occurs in a document."
    built = build(SkillScriptFamily(), card, KNOBS, tmp_path / "b", env_provider, seed=1)
    meta = built.extra("skill_script")
    assert meta["output_kind"] == "text" and all(path.endswith(".txt") for path in meta["outputs"])
    instruction = built.task.instruction()
    assert "Count how often each word occurs in a document." in instruction and "words.py" not in instruction
    assert "text output format" in instruction and ".json" not in instruction
    assert "#!/usr/bin/env bash" not in (built.task.root / "task.toml").read_text()  # no solution in the metadata
    ok, solved = built.solve()
    assert ok and built.verify(solved).passed
    ok, alternative = built.solve("alternatives/reformatted.sh")
    assert ok and built.verify(alternative).passed
