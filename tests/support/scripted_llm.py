"""A scripted OpenAI-compatible HTTP server for tests: real HTTP on 127.0.0.1, recorded answers.

A responder maps each request body to the assistant message to return. Requests are kept so
tests can assert on what the client sent."""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any]], dict[str, Any]]

_ids = itertools.count(1)


def tool_call(name: str, arguments: dict[str, Any], call_id: str | None = None) -> dict[str, Any]:
    return {
        "id": call_id or f"call_{next(_ids)}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def assistant(content: str = "", tool_calls: Iterable[dict[str, Any]] = ()) -> dict[str, Any]:
    calls = list(tool_calls)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = calls
    return message


def bash(command: str) -> dict[str, Any]:
    """An assistant turn that runs one bash command through the ``bash`` tool."""
    return assistant("", [tool_call("bash", {"command": command})])


def last_user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def conversation_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body.get("messages", []):
        content = message.get("content")
        parts.append(content if isinstance(content, str) else json.dumps(content))
    return "\n".join(parts)


class Sequence:
    """Answer each new conversation with the same scripted list of turns, keyed by how many
    assistant turns the conversation already has; past the end, a final text answer."""

    def __init__(self, turns: list[dict[str, Any]], final: str = "Done.") -> None:
        self.turns = turns
        self.final = final

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        done = sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")
        return self.turns[done] if done < len(self.turns) else assistant(self.final)


class Rules:
    """The first rule whose regex matches the conversation decides the answer."""

    def __init__(self, rules: list[tuple[str, Responder]], default: Responder | None = None) -> None:
        self.rules = [(re.compile(pattern, re.S), responder) for pattern, responder in rules]
        self.default = default or (lambda body: assistant("I cannot help with that."))

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        text = conversation_text(body)
        for pattern, responder in self.rules:
            if pattern.search(text):
                return responder(body)
        return self.default(body)


class ScriptedLLMServer:
    def __init__(self, responder: Responder, *, fail_first: int = 0) -> None:
        self.responder = responder
        self.requests: list[dict[str, Any]] = []
        self.fail_first = fail_first
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": "scripted", "object": "model"}]})
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "invalid JSON"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                with server._lock:
                    server.requests.append(body)
                    if server.fail_first > 0:
                        server.fail_first -= 1
                        self._send(503, {"error": {"message": "scripted outage"}})
                        return
                message = server.responder(body)
                prompt_tokens = sum(len(str(m.get("content") or "")) // 4 + 1 for m in body.get("messages", []))
                completion_tokens = len(json.dumps(message)) // 4 + 1
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "model": body.get("model", "scripted"),
                        "choices": [
                            {
                                "index": 0,
                                "message": message,
                                "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                            }
                        ],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": completion_tokens,
                            "total_tokens": prompt_tokens + completion_tokens,
                        },
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
