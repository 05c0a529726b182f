"""External binaries: declared in front matter, run in SKILL.md or scripts; set-up tooling and docs left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ingest.skillkit import GOOD_BODY, analyze


def binaries(tmp_path: Path, body: str = "", files: dict[str, str | bytes] | None = None, **kw: Any) -> Any:
    return analyze(tmp_path, body=GOOD_BODY + "\n" + body, files=files or {}, **kw).runtime["external_binaries"]


def test_front_matter_requires_bins_are_declared_needs(tmp_path: Path) -> None:
    front = ('name: csv-report\ndescription: Summarize a CSV export into a report.\n'
             'metadata: {"agentkit": {"requires": {"bins": ["ffmpeg", "python3"]}}}\n')
    found = binaries(tmp_path, front_matter=front)
    assert found.value == ["ffmpeg"]
    assert found.evidence[0].rule == "runtime.binaries.declared"


def test_installers_are_set_up_but_system_packages_are_needs(tmp_path: Path) -> None:
    body = ("```bash\npip install pandas\nuv run --with openpyxl python3 x.py\nnpm install -g tool\n"
            "sudo apt-get install -y ffmpeg pandoc\nbrew install jq\n```\n")
    found = binaries(tmp_path, body)
    assert found.value == ["ffmpeg", "jq", "pandoc"]
    assert {e.rule for e in found.evidence} == {"runtime.binaries.system_package"}


def test_continuation_lines_are_arguments_not_commands(tmp_path: Path) -> None:
    body = "```bash\ndocker run -it --rm \\\n  -v \"$(pwd)\":/app \\\n  node:20 \\\n  npm run dev\n```\n"
    assert binaries(tmp_path, body).value == ["docker"]


def test_inline_commands_count_when_the_line_asks_to_run_them(tmp_path: Path) -> None:
    body = ("1. Run `gh auth status` first.\n"
            "2. Paste the `systemctl status api` output and a `journalctl` excerpt.\n"
            "   - `kubectl get pods -n prod`\n")
    found = binaries(tmp_path, body)
    assert found.value == ["gh", "kubectl"]
    assert all(e.rule == "runtime.binaries.inline_command" and e.line for e in found.evidence)


def test_readmes_references_and_examples_are_not_read(tmp_path: Path) -> None:
    files = {"README.md": "```bash\ngit clone https://github.com/a/b\n```\n",
             "examples/howto.md": "```bash\nkubectl logs -f api\n```\n",
             "references/cli.md": "```bash\nterraform apply\n```\n"}
    assert binaries(tmp_path, "", files).value == []


def test_git_in_a_script_that_clones_or_refreshes_a_repository_is_set_up(tmp_path: Path) -> None:
    bootstrap = ('repo_url="https://github.com/acme/harness.git"\nif [ -d "$dir/.git" ]; then\n'
                 '  git -C "$dir" fetch --depth=1 origin main\n  git -C "$dir" reset --hard origin/main\n'
                 'else\n  git clone --depth=1 "$repo_url" "$dir"\nfi\nffmpeg -version\n')
    assert binaries(tmp_path / "a", "", {"scripts/bootstrap.sh": bootstrap}).value == ["ffmpeg"]
    own_history = "git log --oneline -20 > history.txt\ngit -C repo bisect start HEAD v1.0\n"
    assert binaries(tmp_path / "b", "", {"scripts/history.sh": own_history}).value == ["git"]
