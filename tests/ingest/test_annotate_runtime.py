from __future__ import annotations

from pathlib import Path

import pytest

from tests.ingest.skillkit import GOOD_BODY, analyze


def runtime(tmp_path: Path, files: dict[str, str | bytes] | None = None, body: str = GOOD_BODY, **kw: object):  # type: ignore[no-untyped-def]
    return analyze(tmp_path, files=files, body=body, **kw).runtime  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "text", "signal"),
    [
        ("scripts/fetch.py", "import requests\nrequests.get('https://x.io/a')\n", "python_http"),
        ("scripts/fetch.js", "const r = await fetch('https://api.x.io/v1')\n", "js_http"),
        ("scripts/get.sh", "curl -s https://data.example.net/file.csv -o a.csv\n", "download_command"),
        ("scripts/get.sh", "git clone https://github.com/a/b\n", "git_clone"),
        ("scripts/get.sh", 'url="https://github.com/a/b.git"\ngit clone --depth=1 "$repo_url" "$dir"\n', "git_clone"),
        ("scripts/mail.py", "import smtplib\ns = smtplib.SMTP('mail.x.io')\n", "socket"),
        ("scripts/feed.py", "import socket\nsocket.create_connection(('feed.x.io', 443))\n", "socket"),
        ("scripts/raw.py", "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_STREAM)\n", "socket"),
        ("scripts/call.py", "URL = 'https://api.weather.io/v2/now'\n", "api_endpoint"),
        ("scripts/ci.sh", "gh run view 42 --log-failed\n", "remote_cli"),
        ("scripts/up.sh", "aws s3 cp out.csv s3://bucket/out.csv\n", "remote_cli"),
    ],
)
def test_network_rules_in_scripts(tmp_path: Path, path: str, text: str, signal: str) -> None:
    network = runtime(tmp_path, {path: text})["network"]
    assert network.value["required"] is True
    assert signal in network.value["signals"]
    assert any(e.file == path and e.line for e in network.evidence)


@pytest.mark.parametrize("text", [
    "import socket\ns = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n",
    "import socket\nwith socket.create_connection(('localhost', port), timeout=1):\n    pass\n",
])
def test_a_local_socket_is_no_network_need(tmp_path: Path, text: str) -> None:
    """A Unix-domain socket (an office suite's helper) or a wait for a local server a test starts."""
    assert "socket" not in runtime(tmp_path, {"scripts/local.py": text})["network"].value["signals"]


def test_network_from_web_tools_and_exported_api_key(tmp_path: Path) -> None:
    body = GOOD_BODY + "\nUse WebSearch to find the latest rates.\n"
    assert "web_tool" in runtime(tmp_path / "a", {}, body)["network"].value["signals"]
    body = GOOD_BODY + "\n```bash\nexport OPENAI_API_KEY=sk-your-key\n```\n"
    net = runtime(tmp_path / "b", {}, body)
    assert "api_key" in net["network"].value["signals"]
    assert net["env_vars"].value["api_keys"] == ["OPENAI_API_KEY"]
    front = "name: csv-report\ndescription: Summarize a CSV export into a report.\nallowed-tools: Read WebFetch\n"
    fetching = GOOD_BODY + "\nSearch the web for the current exchange rates first.\n"
    assert "allowed_tools" in runtime(tmp_path / "c", {}, fetching, front_matter=front)["network"].value["signals"]


def test_web_tools_allowed_but_never_reached_for_are_not_a_need(tmp_path: Path) -> None:
    front = "name: csv-report\ndescription: Summarize a CSV export into a report.\nallowed-tools: Read WebFetch\n"
    network = runtime(tmp_path, {}, front_matter=front)["network"].value
    assert not network["required"] and network["signals"] == []


def test_what_others_fetch_or_a_table_lists_is_no_network_need(tmp_path: Path) -> None:
    """A font a written report links to is fetched by whoever opens it; a table of the login modes
    an app supports is no login; a template of the reader's own release link, under web tools the
    skill never reaches for otherwise, is no need."""
    report = 'HEAD = """<link href="https://fonts.googleapis.com/css2?family=Lora" rel="stylesheet">"""\n'
    assert not runtime(tmp_path / "a", {"scripts/report.py": report})["network"].value["required"]
    table = GOOD_BODY + "\n| Mode | Email Signup | Google OAuth Signup | Email Login |\n|---|---|---|---|\n| on | yes | yes | yes |\n"
    listed = runtime(tmp_path / "b", {}, table)
    assert not listed["network"].value["required"] and not listed["credentials"].value["required"]
    front = "name: go-docs\ndescription: Write Go documentation.\nallowed-tools: Read WebFetch\n"
    template = (GOOD_BODY + "\n## Further reading\n\n- Install the release with "
                "`curl -sSL https://downloads.example.org/{repo}.tar.gz -o {repo}.tgz`\n")
    assert not runtime(tmp_path / "c", {}, template, front_matter=front)["network"].value["required"]


def test_install_lines_and_readme_clones_are_not_runtime_network(tmp_path: Path) -> None:
    body = GOOD_BODY + "\n```bash\npip install pandas\n```\n"
    files = {"README.md": "Install: git clone https://github.com/me/skill\n"}
    network = runtime(tmp_path, files, body)["network"].value
    assert network == {"required": False, "install_time": True, "optional": False, "signals": []}


def test_a_clone_of_a_local_path_is_not_network(tmp_path: Path) -> None:
    script = 'git clone --bare "$work" "$mirror"\ngit clone fixtures/repo.bundle repo\n'
    assert not runtime(tmp_path, {"scripts/mirror.sh": script})["network"].value["required"]


def test_localhost_urls_are_not_network(tmp_path: Path) -> None:
    assert not runtime(tmp_path, {"scripts/a.sh": "curl http://localhost:8080/health\n"})["network"].value["required"]


def test_gpu_required_versus_fallback(tmp_path: Path) -> None:
    gpu = runtime(tmp_path / "a", {"scripts/train.py": "model = model.cuda()\n"})["gpu"]
    assert gpu.value == {"required": True, "mentioned": True, "optional": False, "vendors": ["nvidia"]}
    assert gpu.evidence[0].rule == "runtime.gpu.cuda_device" and gpu.evidence[0].line == 1
    fallback = "device = 'cuda' if torch.cuda.is_available() else 'cpu'\nx.to(device)\n"
    assert runtime(tmp_path / "b", {"scripts/train.py": fallback})["gpu"].value["required"] is False
    stated = GOOD_BODY + "\nThis skill requires an NVIDIA GPU.\n"
    assert runtime(tmp_path / "c", {}, stated)["gpu"].value["required"] is True
    assert runtime(tmp_path / "d", {"scripts/x.sh": "nvidia-smi\n"})["gpu"].value["required"] is True
    assert runtime(tmp_path / "e", {"scripts/x.py": "import vllm\n"})["gpu"].value["required"] is True


def test_external_binaries_from_fences_shell_and_subprocess(tmp_path: Path) -> None:
    body = GOOD_BODY + "\n```bash\n$ ffmpeg -i in.mp4 out.wav && pandoc a.md -o a.pdf\n```\n```python\nimport os\n```\n"
    files = {"scripts/run.sh": "#!/bin/sh\nsudo jq . data.json\n",
             "scripts/ocr.py": "import subprocess\nsubprocess.run(['tesseract', 'a.png', 'out'])\n"}
    binaries = runtime(tmp_path, files, body)["external_binaries"]
    assert binaries.value == ["ffmpeg", "jq", "pandoc", "tesseract"]
    rules = {e.excerpt: e.rule for e in binaries.evidence}
    assert "runtime.binaries.subprocess" in rules.values()


def test_dependencies_declared_imported_undeclared(tmp_path: Path) -> None:
    files = {
        "requirements.txt": "pandas>=2\n# comment\nPyYAML==6\n",
        "scripts/a.py": "import os\nimport pandas as pd\nimport yaml\nfrom PIL import Image\nimport helper\n",
        "scripts/helper.py": "x = 1\n",
        "scripts/b.mjs": "import chalk from 'chalk'\nimport fs from 'node:fs'\nconst l = require('lodash/fp')\n",
        "package.json": '{"dependencies": {"chalk": "^5"}}',
    }
    deps = runtime(tmp_path, files)["dependencies"].value
    assert deps["declared"] == ["chalk", "pandas", "pyyaml"]
    assert deps["imported"] == ["chalk", "lodash", "pandas", "pillow", "pyyaml"]
    assert deps["undeclared"] == ["lodash", "pillow"]



def test_the_skills_own_test_code_declares_no_runtime_dependency(tmp_path: Path) -> None:
    """A skill shipping its tests (pytest, a JS spec runner) does not need them to be used."""
    files = {
        "score.py": "import numpy\n",
        "tests/test_score.py": "import pytest\nimport numpy\nfrom hypothesis import given\n",
        "conftest.py": "import pytest\n",
        "web/app.spec.ts": "import { expect } from 'vitest'\n",
        "web/app.ts": "import chalk from 'chalk'\n",
    }
    deps = runtime(tmp_path, files)["dependencies"].value
    assert deps["imported"] == ["chalk", "numpy"]
    assert deps["undeclared"] == ["chalk", "numpy"]
    assert deps["test_imported"] == ["hypothesis", "pytest", "vitest"]


def test_an_install_lines_comment_and_quotes_name_no_package(tmp_path: Path) -> None:
    body = GOOD_BODY + ('\n```bash\npip install check-pools   # inside an existing venv\n'
                        'pip install "pwshpy[full]"  # + the .NET backend for module cmdlets\n'
                        "npm install chalk #the CLI\n```\n")
    assert runtime(tmp_path, {}, body)["dependencies"].value["declared"] == ["chalk", "check-pools", "pwshpy"]

def test_env_vars_and_os_limits(tmp_path: Path) -> None:
    files = {"scripts/a.py": "import os\nkey = os.environ['SERVICE_TOKEN']\nroot = os.getenv('DATA_DIR')\n",
             "scripts/notify.sh": "osascript -e 'display notification \"done\"'\n"}
    rt = runtime(tmp_path, files)
    assert rt["env_vars"].value["names"] == ["DATA_DIR", "SERVICE_TOKEN"]
    assert rt["env_vars"].value["api_keys"] == ["SERVICE_TOKEN"]
    assert rt["network"].value["required"] is True  # a token the script reads means a remote service
    assert rt["os_arch"].value["limited_to"] == ["macos"]
    multi = GOOD_BODY + "\nWorks on Linux, macOS and Windows; tested on arm64.\n"
    os_arch = runtime(tmp_path / "m", {}, multi)["os_arch"].value
    assert os_arch["limited_to"] == [] and os_arch["arch"] == ["arm64"]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("rm -rf ~/old-cache\n", "runtime.destructive.rm_outside"),
        ("sudo rm -rf /usr/local/lib/thing\n", "runtime.destructive.rm_outside"),
        ("echo 'alias x=y' >> ~/.bashrc\n", "runtime.destructive.system_write"),
        ("echo 1 | sudo tee /etc/sysctl.d/99.conf\n", "runtime.destructive.system_write"),
        ("dd if=img.iso of=/dev/sda bs=4M\n", "runtime.destructive.disk"),
        ("chmod -R 777 /\n", "runtime.destructive.chmod_root"),
    ],
)
def test_destructive_writes_outside_workdir(tmp_path: Path, text: str, rule: str) -> None:
    destructive = runtime(tmp_path, {"scripts/setup.sh": text})["destructive_writes"]
    assert destructive.value == {"outside_workdir": True}
    assert destructive.evidence[0].rule == rule


def test_python_destructive_and_safe_local_writes(tmp_path: Path) -> None:
    py = "import shutil, os\nshutil.rmtree(os.path.expanduser('~/.cache/x'))\n"
    assert runtime(tmp_path / "a", {"scripts/c.py": py})["destructive_writes"].value["outside_workdir"]
    local = "rm -rf ./build out/\necho done > report.txt\n"
    assert not runtime(tmp_path / "b", {"scripts/c.sh": local})["destructive_writes"].value["outside_workdir"]
