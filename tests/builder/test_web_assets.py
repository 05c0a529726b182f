"""Browser libraries fetched from an npm registry for a task's inputs: integrity-checked, read
out of the tarball by name, cached; every failure is a typed error. Served here by a local
registry; a p5.js skill whose library cannot be fetched gets the Python medium, with the reason."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from skillgym_builder.families.image_compose import ImageComposeFamily
from skillgym_builder.families.libraries import web_libraries, web_library
from skillgym_builder.families.web_assets import WebAsset, WebAssetError, fetch

from tests.builder.family_support import card_for

LIBRARY = b"/*! p5.js v9.9.9 */ window.p5 = function () {};\n"


def tarball(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class Registry:
    def __init__(self) -> None:
        self.packages: dict[str, tuple[bytes, str]] = {}
        self.requests: list[str] = []

    def publish(self, name: str, version: str, data: bytes, integrity: str | None = None) -> None:
        digest = base64.b64encode(hashlib.sha512(data).digest()).decode()
        self.packages[f"/{name}/{version}"] = (data, integrity or f"sha512-{digest}")


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Registry]:
    state = Registry()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.requests.append(self.path)
            base = f"http://127.0.0.1:{server.server_port}"
            if self.path in state.packages:
                integrity = state.packages[self.path][1]
                body = json.dumps({"dist": {"tarball": f"{base}/tarballs{self.path}.tgz", "integrity": integrity}})
                self._send(body.encode())
            elif self.path.startswith("/tarballs/") and self.path[len("/tarballs"):-4] in state.packages:
                self._send(state.packages[self.path[len("/tarballs"):-4]][0])
            else:
                self.send_error(404)

        def _send(self, body: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("SKILLGYM_NPM_REGISTRY", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("SKILLGYM_WEB_ASSET_CACHE", str(tmp_path / "cache"))
    yield state
    server.shutdown()


def test_a_file_is_fetched_checked_and_cached(registry: Registry) -> None:
    registry.publish("p5", "9.9.9", tarball({"lib/p5.min.js": LIBRARY, "package.json": b"{}"}))
    asset = WebAsset("p5", "9.9.9", "lib/p5.min.js")
    assert fetch(asset) == LIBRARY
    asked = len(registry.requests)
    assert fetch(asset) == LIBRARY and len(registry.requests) == asked  # from the cache


def test_a_tarball_that_does_not_match_its_integrity_is_refused(registry: Registry) -> None:
    registry.publish("p5", "9.9.9", tarball({"lib/p5.min.js": LIBRARY}), integrity="sha512-AAAA")
    with pytest.raises(WebAssetError) as caught:
        fetch(WebAsset("p5", "9.9.9", "lib/p5.min.js"))
    assert caught.value.reason == "web_asset_integrity"


def test_a_missing_file_or_a_link_is_refused(registry: Registry) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        link = tarfile.TarInfo("package/lib/p5.min.js")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    registry.publish("p5", "9.9.9", buffer.getvalue())
    for member in ("lib/p5.min.js", "lib/other.js"):
        with pytest.raises(WebAssetError) as caught:
            fetch(WebAsset("p5", "9.9.9", member))
        assert caught.value.reason == "web_asset_invalid"


def test_unknown_versions_and_bad_names_are_typed_errors(registry: Registry) -> None:
    with pytest.raises(WebAssetError) as caught:
        fetch(WebAsset("p5", "1.0.0", "lib/p5.min.js"))
    assert caught.value.reason == "web_asset_unavailable"
    for package, version, member in [("../p5", "1.0.0", "x.js"), ("p5", "latest", "x.js"), ("p5", "1.0.0", "../x.js")]:
        with pytest.raises(WebAssetError):
            WebAsset(package, version, member)


def test_browser_libraries_a_skill_loads() -> None:
    text = """<script src="https://cdnjs.cloudflare.com/ajax/libs/p5.js/1.7.0/p5.min.js"></script>
    <script src="https://cdn.jsdelivr.net/npm/d3@7.8.5/dist/d3.min.js"></script>
    Built with three.js; runs on node.js."""
    assert web_libraries(text) == {"p5": "1.7.0", "d3": "7.8.5", "three": None}
    assert web_library("p5@1.11.3") == "js:p5" and web_library("chart.js") == "js:chart.js"


def test_a_p5_skill_whose_library_cannot_be_fetched_gets_the_python_medium(registry: Registry) -> None:
    card = card_for("p5-tiles", "generative-art")
    output = ImageComposeFamily().instantiate(card, 0, {"record_count": 3, "noise_level": 0.0, "distractor_files": 0,
                                                        "error_recovery": 0, "multi_step": 0, "long_horizon": 1})
    assert output.metadata["medium"] == "python" and "p5@1.9.0" in output.metadata["p5_unavailable"]
    assert "lib/p5.min.js" not in output.workspace and output.system_packages == []
