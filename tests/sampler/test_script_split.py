from __future__ import annotations

from skillgym_sampler.harness.script_split import split_script


def test_sections_become_commands_with_a_state_preamble() -> None:
    plan = split_script(
        "#!/bin/bash\nset -e\ncd /app\nexport N=3\n\n# Build\nmake all\nmake check\n\n# Report\necho done\n"
    )
    assert plan.split and plan.errexit
    assert plan.preamble == "set -e\ncd /app\nexport N=3"
    assert [(c.comment, c.command) for c in plan.commands] == [("Build", "make all\nmake check"), ("Report", "echo done")]
    assert plan.full_command(plan.commands[1]) == "set -e\ncd /app\nexport N=3\necho done"


def test_heredocs_quotes_and_compound_commands_stay_whole() -> None:
    script = (
        "cat > a.py <<'PY'\nprint('x')\n\n# not a comment\nPY\n\n"
        "if [ -f a.py ]; then\n\n  python3 a.py\nfi\n\n"
        "echo 'multi\n\nline'\n\n"
        "for f in *.txt; do\n  wc -l \"$f\"\ndone\n\n"
        "python3 -c \"import sys\nprint(1)\" \\\n  && echo ok\n"
        "f() {\n  echo hi\n}\n"
    )
    plan = split_script(script)
    # the function definition after work makes splitting unsafe: one command
    assert not plan.split and plan.commands[0].command == script.strip()
    plan = split_script(script.rsplit("f() {", 1)[0])
    assert plan.split
    commands = [c.command for c in plan.commands]
    assert commands[0] == "cat > a.py <<'PY'\nprint('x')\n\n# not a comment\nPY"
    assert commands[1] == "if [ -f a.py ]; then\n\n  python3 a.py\nfi"
    assert commands[2] == "echo 'multi\n\nline'"
    assert commands[3].startswith("for f in") and commands[3].endswith("done")
    assert commands[4].endswith("&& echo ok")


def test_unsafe_scripts_run_as_one_command() -> None:
    for script in (
        "echo a\n\ncd sub\nmake\n",            # state change mixed with later work
        "case $1 in\n  a) echo a ;;\nesac\n",  # case patterns
        "echo 'unterminated\n",                # unbalanced quote
    ):
        plan = split_script(script)
        assert not plan.split and len(plan.commands) == 1
    assert not split_script("set -e\n").split
