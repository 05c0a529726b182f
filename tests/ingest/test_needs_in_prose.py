"""Network, GPU and credential needs stated (or denied) in SKILL.md prose, with evidence per flag."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.ingest.skillkit import GOOD_BODY, analyze


def runtime(tmp_path: Path, body: str, files: dict[str, str | bytes] | None = None, **kw: Any) -> Any:
    return analyze(tmp_path, body=GOOD_BODY + "\n" + body, files=files or {}, **kw).runtime


@pytest.mark.parametrize(
    ("sentence", "signal"),
    [
        ("This skill queries the arXiv API for the newest papers in a category.", "service"),
        ("Look up the forecast for the city from Open-Meteo.", "service"),
        ("The first run downloads the model weights (about 1 GB).", "model_download"),
        ("The checkpoints are downloaded from the hub the first time it runs.", "model_download"),
        ("Search the web for the latest release notes.", "web_access"),
        ("Search with `GET https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi?db=pubmed&term=x`.",
         "url_instruction"),
    ],
)
def test_network_need_stated_only_in_prose(tmp_path: Path, sentence: str, signal: str) -> None:
    network = runtime(tmp_path, sentence)["network"]
    assert network.value["required"] is True
    assert signal in network.value["signals"]
    hit = next(e for e in network.evidence if e.rule == f"runtime.network.{signal}")
    assert hit.file == "SKILL.md" and hit.line and sentence[:20] in (hit.excerpt or "")


@pytest.mark.parametrize(
    "body",
    [
        "## Resources\n\n- Source code: https://github.com/acme/tool\n- [API docs](https://api.acme.dev/v1/)\n",
        "This is 4-6x faster than OpenAI Whisper.\n",
        "Unlike online PDF services, the merge works without network access.\n",
        "The script never downloads anything; it fails if the model directory is missing.\n",
        "Open-Meteo needs no API key.\n",
    ],
)
def test_links_comparisons_and_denials_are_not_a_network_need(tmp_path: Path, body: str) -> None:
    assert runtime(tmp_path, body)["network"].value["required"] is False


def test_offline_after_first_download_still_needs_the_network(tmp_path: Path) -> None:
    body = "The first run downloads the chosen model; later runs work offline.\n"
    assert runtime(tmp_path, body)["network"].value["required"] is True


def test_offline_statement_outweighs_prose_but_not_code(tmp_path: Path) -> None:
    body = "Works fully offline. The model is read from `models/` and downloaded nowhere.\n"
    prose_only = runtime(tmp_path / "a", body + "It pulls the tokenizer from the Hugging Face hub.\n")["network"]
    assert prose_only.value["required"] is False
    assert any(e.rule == "runtime.network.offline" for e in prose_only.evidence)
    code = {"scripts/get.py": "import requests\nrequests.get('https://data.acme.io/x.csv')\n"}
    assert runtime(tmp_path / "b", body, code)["network"].value["required"] is True


def test_optional_network_is_recorded_with_its_evidence(tmp_path: Path) -> None:
    body = "Optionally, upload the report to Slack when it is done.\n"
    network = runtime(tmp_path, body)["network"]
    assert network.value["required"] is False and network.value["optional"] is True
    assert any(e.rule == "runtime.network.service:optional" and e.line for e in network.evidence)


@pytest.mark.parametrize(
    ("body", "files"),
    [
        ("A GPU is optional: the script uses CUDA if available and falls back to the CPU.\n",
         {"scripts/run.py": "device = 'cuda'\nmodel.to(device)\n"}),
        ("Runs on the CPU everywhere; an NVIDIA GPU makes it much faster.\n", {"scripts/x.sh": "nvidia-smi\n"}),
        ("Keep the code device-agnostic: use `self.device` instead of calling `.cuda()`.\n", {}),
        ("```python\ntrainer = Trainer(accelerator=\"auto\")\n```\nFor four GPUs: `Trainer(accelerator=\"gpu\")`.\n",
         {}),
    ],
)
def test_optional_cuda_is_not_a_gpu_need(tmp_path: Path, body: str, files: dict[str, str | bytes]) -> None:
    gpu = runtime(tmp_path, body, files)["gpu"].value
    assert gpu["required"] is False and gpu["optional"] is True


def test_apple_gpu_is_not_a_gpu_need(tmp_path: Path) -> None:
    body = "Requires the GPU of an Apple Silicon Mac: it runs Whisper through MLX on Metal.\n"
    gpu = runtime(tmp_path, body)["gpu"]
    assert gpu.value["required"] is False and gpu.value["vendors"] == ["apple"]
    assert any(e.rule == "runtime.gpu.stated:optional" for e in gpu.evidence)


@pytest.mark.parametrize(
    "body",
    [
        "## Requirements\n\n- An NVIDIA GPU with at least 12 GB of VRAM. There is no CPU mode.\n",
        "It does not run on a laptop CPU in any useful way.\n",
        "This skill works on a machine with an NVIDIA GPU and the CUDA toolkit.\n",
        "## Before you start\n\nvLLM serves models on NVIDIA GPUs with CUDA 12.\n",
    ],
)
def test_gpu_need_stated_in_prose(tmp_path: Path, body: str) -> None:
    gpu = runtime(tmp_path, body)["gpu"]
    assert gpu.value["required"] is True
    assert gpu.evidence[0].file == "SKILL.md" and gpu.evidence[0].line


def test_a_stated_gpu_requirement_outweighs_a_cpu_code_path(tmp_path: Path) -> None:
    body = "This skill needs a CUDA GPU; the 4-bit kernels do not run on the CPU, so there is no fallback.\n"
    script = {"scripts/train.py": "if not torch.cuda.is_available():\n    raise SystemExit('cpu')\n"}
    assert runtime(tmp_path, body, script)["gpu"].value["required"] is True


@pytest.mark.parametrize(
    ("body", "name"),
    [
        ("It calls the OpenAI API, so it needs an OPENAI_API_KEY in the environment.\n", "OPENAI_API_KEY"),
        ("Gated models need a Hugging Face access token:\n\n```bash\nexport HF_TOKEN=hf_x\n```\n", "HF_TOKEN"),
        ("Make sure `gh` is logged in: ask the user to run `gh auth login`.\n", None),
        ("Log in with OAuth: `agent mcp login notion`.\n", None),
    ],
)
def test_credentials_needed(tmp_path: Path, body: str, name: str | None) -> None:
    rt = runtime(tmp_path, body)
    credentials = rt["credentials"].value
    assert credentials["required"] is True
    assert credentials["names"] == ([name] if name else [])
    assert rt["network"].value["required"] is True  # a secret is for a remote service


@pytest.mark.parametrize(
    "body",
    [
        "If you have an NCBI API key you can optionally export it:\n\n```bash\nexport NCBI_API_KEY=k\n```\n",
        "No sign-up and no API key needed.\n",
        "Flag code like `SECRET = env.get(\"JWT_SECRET\") or \"changeme\"`: the app runs with a known secret.\n",
    ],
)
def test_optional_or_discussed_credentials_are_not_needed(tmp_path: Path, body: str) -> None:
    assert runtime(tmp_path, body)["credentials"].value["required"] is False


def test_keys_in_reference_examples_are_not_needed(tmp_path: Path) -> None:
    files = {"references/examples.md": "```bash\nexport STRIPE_API_KEY=sk_live_x\n```\n"}
    rt = runtime(tmp_path, "See `references/examples.md` for fail-open patterns.\n", files)
    assert rt["credentials"].value["required"] is False and rt["network"].value["required"] is False
    assert rt["env_vars"].value["api_keys"] == ["STRIPE_API_KEY"]
