"""``skill_usage``: read from the reference solution's own text, so a family cannot claim a use
of the skill its solution does not make."""

from __future__ import annotations

from pathlib import Path

from skillgym_builder.families.evidence import shown_commands
from skillgym_builder.families.usage import import_name, skill_usage
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput
from skillgym_core.contracts.skill import SkillFile, SkillRecord
from skillgym_core.ids import hash_tree

from tests.builder.family_support import card_for


def _card(tmp_path: Path, skill_md: str, *, scripts: tuple[str, ...] = (), declared: tuple[str, ...] = (),
          binaries: tuple[str, ...] = ()) -> SkillCard:
    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text(skill_md)
    for rel in scripts:
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text("print('hi')\n")
    card = card_for("skill", "data-analysis", folder=folder, runtime={
        "dependencies": {"declared": list(declared)}, "external_binaries": list(binaries)})
    files = [SkillFile(path=rel, size=1, sha256="0" * 64) for rel in scripts]
    record: SkillRecord = card.record.model_copy(update={"files": files, "content_hash": hash_tree(folder)})
    return SkillCard(record=record, root=card.root, skill_md=card.skill_md, sections=card.sections)


def _output(solve: str, requirements: list[str], claimed: bool = False) -> TemplateOutput:
    return TemplateOutput(instruction="# t\n", workspace={}, protected=[], tests={}, solution_steps=[],
                          solve_script=solve, requirements=requirements,
                          metadata={"skill_claim": {"claimed": claimed, "reason": "", "facts": {"rule": "x"}}})


def test_running_the_skills_own_script_counts_first(tmp_path: Path) -> None:
    card = _card(tmp_path, "# Stats\n", scripts=("scripts/profile.py",), declared=("pandas",))
    solve = f"python3 /skills/{card.dir_name}/scripts/profile.py data.csv\npython3 - <<'PY'\nimport pandas\nPY\n"
    assert skill_usage(card, _output(solve, ["pandas>=2"]))["kind"] == "script"


def test_the_skills_library_counts_only_when_installed_and_imported(tmp_path: Path) -> None:
    card = _card(tmp_path, "# PDFs\n\n```python\nimport pdfplumber\n```\n")
    used = _output("cat > s.py <<'PY'\nimport pdfplumber\nPY\npython3 s.py\n", ["pdfplumber>=0.11"])
    assert skill_usage(card, used) == {"kind": "library", "scripts": [], "libraries": ["pdfplumber"], "tools": [],
                                       "facts": []}
    not_installed = _output("cat > s.py <<'PY'\nimport pdfplumber\nPY\n", ["pypdf"])
    assert skill_usage(card, not_installed)["kind"] == "none"
    other_library = _output("cat > s.py <<'PY'\nimport pypdf\nPY\n", ["pdfplumber", "pypdf"])
    assert skill_usage(card, other_library)["kind"] == "none"


def test_a_general_purpose_library_counts_only_for_a_skill_about_no_other(tmp_path: Path) -> None:
    """pandas is what a statsmodels skill loads its tables with, not what it teaches."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    card = _card(tmp_path / "a", "# Models\n\n```python\nimport pandas as pd\nimport statsmodels.api as sm\n```\n")
    pandas_only = _output("python3 - <<'PY'\nimport pandas\nPY\n", ["pandas>=2", "statsmodels"])
    assert skill_usage(card, pandas_only)["kind"] == "none"
    both = _output("python3 - <<'PY'\nimport pandas\nimport statsmodels\nPY\n", ["pandas>=2", "statsmodels"])
    assert skill_usage(card, both)["libraries"] == ["statsmodels"]
    tables = _card(tmp_path / "b", "# Tables\n\n```python\nimport pandas as pd\n```\n")
    assert skill_usage(tables, pandas_only)["libraries"] == ["pandas"]


def test_a_module_run_and_a_skill_program_count(tmp_path: Path) -> None:
    card = _card(tmp_path, "# TDD\n", declared=("pytest",), binaries=("git",))
    assert skill_usage(card, _output("python3 -m pytest -q\n", ["pytest>=8"]))["libraries"] == ["pytest"]
    assert skill_usage(card, _output("cd repo\ngit bisect run ./check.sh\n", []))["kind"] == "tool"


def test_a_program_the_procedure_runs_counts_only_when_it_is_the_familys(tmp_path: Path) -> None:
    card = _card(tmp_path, "# Triage\n\nPrefer `nginx -t` before a reload; list with `ls -la <path>`.\n")
    solve = "ls -la etc\nnginx -t -e stderr -c /app/etc/nginx/nginx.conf\n"
    assert skill_usage(card, _output(solve, []))["kind"] == "none"  # needed by the skill: neither
    assert skill_usage(card, _output(solve, []), ["nginx", "systemctl"])["tools"] == ["nginx"]
    assert skill_usage(card, _output("ls -la etc\n", []), ["nginx", "ls"])["kind"] == "tool"
    assert skill_usage(card, _output("echo nginx -t\n", []), ["nginx"])["kind"] == "none"


def test_the_programs_a_skill_shows_being_run() -> None:
    text = ("Run `nginx -t` first, then `sudo systemctl reload nginx`; `nginx` alone only names it.\n\n"
            "```bash\n$ journalctl -u app -n 50\nss -ltnp\n```\n\n```python\nprint('x')\n```\n")
    assert shown_commands(text) == {"nginx", "systemctl", "journalctl", "ss"}


def test_facts_count_only_when_claimed_and_read_from_the_skill(tmp_path: Path) -> None:
    card = _card(tmp_path, "# Plan\n")
    reads = f"sed -n 1,40p /skills/{card.dir_name}/SKILL.md\n"
    assert skill_usage(card, _output(reads, [], claimed=True))["kind"] == "skill_facts"
    assert skill_usage(card, _output(reads, [], claimed=False))["kind"] == "none"
    assert skill_usage(card, _output("echo done\n", [], claimed=True))["kind"] == "none"


def test_import_names_of_distributions() -> None:
    assert [import_name(d) for d in ("Pillow", "python-docx", "PyYAML", "scikit-learn", "sympy")] == [
        "PIL", "docx", "yaml", "sklearn", "sympy"]


def test_a_library_the_skill_names_in_prose_counts(tmp_path: Path) -> None:
    card = _card(tmp_path, "# Brand\n\nColours are applied via python-pptx's RGBColor class.\n")
    solve = "cat > s.py <<'PY'\nfrom pptx import Presentation\nPY\n"
    assert skill_usage(card, _output(solve, ["python-pptx>=1.0"]))["libraries"] == ["pptx"]
    assert skill_usage(card, _output(solve, ["pptx-tools"]))["kind"] == "none"
