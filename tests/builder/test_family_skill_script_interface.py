"""How skill-script reads a script's interface without running it: which argument takes the input,
which scripts are candidates at all, which packages the task installs, and what its inputs carry."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest
from skillgym_builder.families.script_cli import INPUT, ScriptCall, ScriptUnusable, analyse
from skillgym_builder.families.skill_script import SkillScriptFamily, material

from tests.builder.family_support import card_for, write_skill

SKILL_MD = "---\nname: s\ndescription: d\n---\nA skill.\n"
KNOBS = {"record_count": 20, "noise_level": 0.2, "distractor_files": 0, "long_horizon": 1}
WALKER = "import argparse, os\np = argparse.ArgumentParser()\n{arguments}\na = p.parse_args()\n{body}"
WALK_BODY = "for folder, _, names in os.walk({target}):\n    print(folder, sorted(names))\n"


def _call(tmp_path: Path, files: dict[str, str], skill_md: str = SKILL_MD) -> ScriptCall:
    return analyse(card_for("s", None, folder=write_skill(tmp_path / "s", skill_md, files)))


def test_a_required_option_helped_as_a_path_takes_the_input(tmp_path: Path) -> None:
    arguments = ("p.add_argument('--component', required=True, help='Component file or directory path')\n"
                 "p.add_argument('--output-format', default='table', choices=['json', 'table'])")
    call = _call(tmp_path, {"scripts/extract.py": WALKER.format(arguments=arguments, body=WALK_BODY.format(target="a.component"))})
    assert call.argv == ("--component", INPUT) and call.origin == "argparse option" and call.input_kind == "tree"


def test_a_required_option_that_is_not_a_path_is_not_taken_for_the_input(tmp_path: Path) -> None:
    arguments = "p.add_argument('--team', required=True, help='the team to report on')"
    with pytest.raises(ScriptUnusable) as caught:
        _call(tmp_path, {"scripts/report.py": WALKER.format(arguments=arguments, body=WALK_BODY.format(target="'.'"))})
    assert caught.value.code == "script_invocation"


def test_a_lone_positional_with_a_default_is_given_the_input(tmp_path: Path) -> None:
    arguments = ("p.add_argument('root', nargs='?', default='skills')\n"
                 "p.add_argument('--format', choices=('text', 'json'), default='text')")
    call = _call(tmp_path, {"scripts/audit.py": WALKER.format(arguments=arguments, body=WALK_BODY.format(target="a.root"))})
    assert call.argv == (INPUT,) and call.origin == "argparse" and call.input_kind == "tree"


def test_the_skills_own_tests_and_package_markers_are_not_its_tools(tmp_path: Path) -> None:
    test = "import sys\nimport pytest\nprint(open(sys.argv[1]).read())\n"
    with pytest.raises(ScriptUnusable) as caught:
        _call(tmp_path, {"tests/test_outline.py": test, "scripts/test_helpers.py": test, "conftest.py": test,
                         "__init__.py": "", "references/__init__.py": ""})
    assert caught.value.code == "no_script"


def test_a_second_argument_read_only_when_given_leaves_one_input(tmp_path: Path) -> None:
    script = ("import sys, csv\nrows = list(csv.DictReader(open(sys.argv[1])))\n"
              "out = sys.argv[2] if len(sys.argv) > 2 else None\n"
              "print(sum(float(r['amount']) for r in rows), out)\n")
    assert _call(tmp_path / "a", {"scripts/total.py": script}).argv == (INPUT,)
    needed = script.replace("out = sys.argv[2] if len(sys.argv) > 2 else None", "label = sys.argv[2]").replace(", out)", ", label)")
    with pytest.raises(ScriptUnusable) as caught:
        _call(tmp_path / "b", {"scripts/total.py": needed})
    assert caught.value.code == "script_invocation"


def test_an_import_the_script_guards_is_installed_and_one_it_needs_is_not_refused(tmp_path: Path) -> None:
    script = ("import sys\ntry:\n    import tomlkit\nexcept ImportError:\n    sys.exit('tomlkit is not installed')\n"
              "import os, yaml\nfor folder, _, names in os.walk(sys.argv[1]):\n    print(folder, yaml.safe_dump(names), tomlkit.dumps({}))\n")
    call = _call(tmp_path, {"scripts/bump.py": script})
    assert call.packages == ("pyyaml", "tomlkit")
    guarded_unknown = ("import os, sys\ntry:\n    import obscure_fast_walk\nexcept ImportError:\n    pass\n"
                       "for folder, _, names in os.walk(sys.argv[1]):\n    print(folder, names)\n")
    assert _call(tmp_path / "b", {"scripts/read.py": guarded_unknown}).packages == ()


GAPS = """\
    import sys
    import pandas as pd
    df = pd.read_csv(sys.argv[1])
    print(df["units"].astype(float).sum(), df.isnull().sum().to_dict())
"""


def _empty_cells(text: str) -> int:
    return sum(cell == "" for row in list(csv.reader(io.StringIO(text)))[1:] for cell in row)


def test_a_script_that_looks_for_missing_values_gets_tables_with_gaps(tmp_path: Path) -> None:
    gaps = _call(tmp_path / "a", {"scripts/gaps.py": GAPS.replace("    ", "")})
    assert gaps.missing_values
    rel = "data/records.csv"
    assert _empty_cells(str(material(gaps, rel, random.Random(4), 40, 0.2)[rel])) > 0
    assert _empty_cells(str(material(gaps, rel, random.Random(4), 40, 0.0)[rel])) == 0
    whole = _call(tmp_path / "b", {"scripts/total.py": GAPS.replace("    ", "").replace(", df.isnull().sum().to_dict()", "")})
    assert not whole.missing_values and _empty_cells(str(material(whole, rel, random.Random(4), 40, 0.2)[rel])) == 0


def test_the_inputs_drawn_again_differ_in_length_too(tmp_path: Path) -> None:
    folder = write_skill(tmp_path / "s", SKILL_MD, {"scripts/total.py": GAPS.replace("    ", "")})
    output = SkillScriptFamily().instantiate(card_for("s", None, folder=folder), 3, KNOBS)
    variants = output.render_jobs[0].params["variants"]
    rows = [len(next(iter(v["files"].values())).splitlines()) for v in variants]
    assert rows == [KNOBS["record_count"] + 1, KNOBS["record_count"] + 4]


@pytest.mark.parametrize(("arguments", "argv"), [
    ("p.add_argument('first', help='project folder')\np.add_argument('output_file')", (INPUT, "{output}")),
    ("p.add_argument('first')\np.add_argument('report', help='where the summary goes')", (INPUT, "{output}")),
    ("p.add_argument('first')\np.add_argument('output_dir', help='folder for the pages')", None),
    ("p.add_argument('first')\np.add_argument('second')", None),
])
def test_a_second_positional_that_names_the_result_is_where_it_goes(
        tmp_path: Path, arguments: str, argv: tuple[str, ...] | None) -> None:
    script = WALKER.format(arguments=arguments, body=WALK_BODY.format(target="a.first"))
    if argv is None:
        with pytest.raises(ScriptUnusable):
            _call(tmp_path, {"scripts/convert.py": script})
        return
    call = _call(tmp_path, {"scripts/convert.py": script})
    assert call.argv == argv and call.writes_file and call.input_kind == "tree"


def test_a_result_path_read_from_the_second_argument_is_where_it_goes(tmp_path: Path) -> None:
    script = ("import os, sys\nsource = sys.argv[1]\noutput_path = sys.argv[2]\n"
              "with open(output_path, 'w') as out:\n    for folder, _, names in os.walk(source):\n"
              "        print(folder, len(names), file=out)\n")
    call = _call(tmp_path, {"scripts/count.py": script})
    assert call.argv == (INPUT, "{output}") and call.origin == "sys.argv" and call.writes_file
    unnamed = script.replace("output_path", "label")
    with pytest.raises(ScriptUnusable):
        _call(tmp_path / "b", {"scripts/count.py": unnamed})


@pytest.mark.parametrize("synopsis", ["<subcommand> [options] <file>", "COMMAND FILE", "{command} <path>"])
def test_a_synopsis_naming_no_command_is_passed_over_for_the_first_real_run(tmp_path: Path, synopsis: str) -> None:
    skill_md = (f"---\nname: s\ndescription: d\n---\nUsage: `python3 scripts/ops.py {synopsis}`\n\n"
                "Show a workbook's sheets with `python3 scripts/ops.py info report.xlsx`.\n")
    code = "import sys\nfrom openpyxl import load_workbook\nprint(load_workbook(sys.argv[2]).sheetnames)\n"
    call = _call(tmp_path, {"scripts/ops.py": code}, skill_md)
    assert call.argv == ("info", INPUT) and call.input_kind == "xlsx" and call.example_stem == "report"
