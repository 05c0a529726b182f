"""What does and does not make a skill need the network, as real published skills word it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest.skillkit import GOOD_BODY, analyze


def network(tmp_path: Path, body: str = GOOD_BODY, files: dict[str, str | bytes] | None = None,
            **kw: object) -> dict[str, object]:
    return analyze(tmp_path, files=files, body=body, **kw).runtime["network"].value  # type: ignore[no-any-return]


@pytest.mark.parametrize(("files", "body"), [
    ({"scripts/yapi.js": "export async function get(url) {\n  const res = await fetch(url, opts);\n}\n"}, GOOD_BODY),
    ({"scripts/mail.js": "const nodemailer = require('nodemailer');\n"}, GOOD_BODY),
    ({"scripts/tts.py": "import edge_tts\n"}, GOOD_BODY),
    ({"scripts/w.py": "ov.datasets.download_data(\n    'https://stacks.example.edu/file/models.zip')\n".replace(
        "\n    ", "")}, GOOD_BODY),
    (None, GOOD_BODY + "\n- **State**: `tofu plan` before `apply`.\n"),
    (None, GOOD_BODY + "\n```bash\nkubectl drain node-1 --ignore-daemonsets\n```\n"),
    (None, GOOD_BODY + "\nRequires a logged-in Example Archive membership account.\n"),
    (None, GOOD_BODY + "\n1. Verify external DNS points to the correct IP.\n"),
])
def test_remote_work_is_a_need(tmp_path: Path, files: dict[str, str] | None, body: str) -> None:
    assert network(tmp_path, body, files)["required"]


@pytest.mark.parametrize(("files", "body"), [
    # an MCP server may be local
    (None, GOOD_BODY + "\nUse the `mcp__plugin_memory__search` tool to recall past notes.\n"),
    # a git remote may be a local path
    (None, GOOD_BODY + "\n```bash\ngit push origin main\n```\n"),
    # a vendor's installer is set-up, not the skill's work
    (None, GOOD_BODY + "\n```bash\ncurl -fsSL https://ollama.com/install.sh | sh\n```\n"),
    # a CI workflow the skill writes runs in CI
    (None, GOOD_BODY + "\n```yaml\n- run: aws s3 sync dist s3://bucket/static\n```\n"),
    (None, GOOD_BODY + "\n#### AWS S3 + CloudFront\n"),
    # what a comment of a script names is not run
    ({"hooks/guard.sh": "#!/bin/sh\n# blocks: gh pr merge, gh issue comment\nexit 0\n"}, GOOD_BODY),
    # an application's own signing secret
    (None, GOOD_BODY + "\nVerify: set JWT_SECRET=\"\" and the login must fail.\n"),
    # a spreadsheet model
    (None, GOOD_BODY + "\n- Verify they pull correct values before building the full model.\n"),
])
def test_look_alikes_are_not(tmp_path: Path, files: dict[str, str] | None, body: str) -> None:
    assert not network(tmp_path, body, files)["required"]


def test_a_vendor_installer_is_install_time(tmp_path: Path) -> None:
    body = GOOD_BODY + "\n```bash\ncurl -fsSL https://ollama.com/install.sh | sh\n```\n"
    assert network(tmp_path, body)["install_time"]


def test_an_offline_remark_in_a_module_does_not_cancel_the_procedure(tmp_path: Path) -> None:
    files = {"scripts/links.js": "// this module never fetches an image\nexport const x = 1;\n"}
    body = GOOD_BODY + "\nSearch the web for the page's current ranking.\n"
    assert network(tmp_path, body, files)["required"]


@pytest.mark.parametrize(("files", "body"), [
    # the model is what is downloaded
    (None, GOOD_BODY + "\nThe first run downloads the pretrained model weights.\n"),
    # a service's name with a verb of remote work, the sentence wrapped over two lines
    (None, GOOD_BODY + "\nEvery morning the script posts the digest\nto the team's Slack channel.\n"),
    # an untagged block of arrows is a flow diagram of the procedure
    (None, GOOD_BODY + "\n```\nTrigger\n  → find the failed workflow run via the GitHub API\n  → classify it\n```\n"),
    # a script that rebuilds data is part of the procedure when SKILL.md runs it
    ({"scripts/build-database.js": "const req = https.get(url, () => {});\n"},
     GOOD_BODY + "\nRun `node scripts/build-database.js` to refresh the data.\n"),
])
def test_needs_written_across_lines_and_diagrams_count(tmp_path: Path, files: dict[str, str] | None,
                                                        body: str) -> None:
    assert network(tmp_path, body, files)["required"]


@pytest.mark.parametrize(("files", "body"), [
    # what is fetched is a URL; the corpus comes a clause later
    (None, GOOD_BODY + "\n## Adding a page\n\nFetch a URL and add it to the corpus, then update the graph.\n"),
    # "for X, see Y": the reader is sent elsewhere, the wrapped sentence read whole
    (None, GOOD_BODY + "\nNot prompt design or model choice: for the Anthropic API\nsurface (params, streaming) "
                       "see the `claude-api` reference.\n"),
    # a remedy for a broken set-up, the condition on the line before
    (None, GOOD_BODY + "\nRun the doctor script first. If `ollama` is\nunreachable: `ollama serve` then "
                       "`ollama pull llama3.2:3b`.\n"),
    # "pushes" is a noun here
    (None, GOOD_BODY + "\nThe hook nets Gemini sessions and direct-terminal pushes that the other guard misses.\n"),
    # the maintainer's script that rebuilds the bundled database, which nothing in the skill names
    ({"scripts/build-database.js": "const req = https.get(url, () => {});\n", "data/drugs.json": "[]\n"},
     GOOD_BODY),
])
def test_pointers_remedies_and_data_builders_are_not_needs(tmp_path: Path, files: dict[str, str] | None,
                                                           body: str) -> None:
    assert not network(tmp_path, body, files)["required"]
