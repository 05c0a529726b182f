from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from skillgym_ingest.llm import parse_verdict
from skillgym_ingest.pipeline import ingest
from skillgym_ingest.settings import IngestSettings

from tests.ingest.skillkit import write_skill


class ScriptedServer:
    """A real OpenAI-compatible HTTP endpoint on 127.0.0.1 answering from a script, by skill name."""

    def __init__(self, answers: dict[str, str]) -> None:
        self.answers = answers
        self.requests: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
                prompt = body["messages"][-1]["content"]
                name = prompt.split("\n", 1)[0].removeprefix("name: ")
                if name not in outer.answers:
                    self.send_response(500)
                    self.end_headers()
                    return
                reply = {"choices": [{"message": {"role": "assistant", "content": outer.answers[name]}}]}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    verdict = {"network_required": False, "gpu_required": False, "requirement_clarity": 0.9,
               "category": "data-science", "rationale": "Reads a CSV and writes a report."}
    scripted = ScriptedServer({
        "csv-report": json.dumps({**verdict, "description_consistent": True}),
        "csv-mismatch": "```json\n" + json.dumps({**verdict, "description_consistent": False,
                                                  "network_required": True}) + "\n```",
    })
    yield scripted
    scripted.close()


def test_llm_annotation_agreement_and_consistency_verdict(tmp_path: Path, server: ScriptedServer) -> None:
    corpus = tmp_path / "corpus"
    write_skill(corpus, "csv-report")
    write_skill(corpus, "csv-mismatch", description="Summarize a CSV export into a report listing totals per column.")
    write_skill(corpus, "no-answer", description="Summarize CSV export data into a report for each column.",
                body="# Totals\n\nRead data.csv, compute the totals of each column and write report.md.\n")
    settings = IngestSettings(workers=1, llm_annotate=True, llm_base_url=server.url, llm_model="judge",
                              llm_api_key="secret-token", dedup=False)  # type: ignore[arg-type]
    result = ingest([corpus], settings=settings)
    records = {r.name: r for r in result.records}
    assert records["csv-report"].accepted
    assert records["csv-report"].quality["llm"].value["agrees_with_rules"] == {
        "network_required": True, "gpu_required": True, "description_consistent": True}
    assert records["csv-report"].quality["llm"].evidence[0].rule == "llm.judge"
    assert records["csv-mismatch"].reasons == ["inconsistent"]
    assert records["no-answer"].accepted
    assert any(d.code == "llm_annotator" for d in records["no-answer"].diagnostics)
    assert result.llm_agreement == {"network_required": 0.5, "gpu_required": 1.0, "description_consistent": 0.5}
    assert server.requests[0]["path"] == "/v1/chat/completions"
    assert server.requests[0]["auth"] == "Bearer secret-token" and server.requests[0]["model"] == "judge"


def test_reply_parsing() -> None:
    assert parse_verdict('Here you go: {"a": 1} thanks') == {"a": 1}
    with pytest.raises(Exception, match="not JSON"):
        parse_verdict("no json here")
