"""Serve a trained student on an OpenAI-compatible chat endpoint so the sampler can run
agents against it: ``POST /v1/chat/completions`` (tools and ``tool_calls`` included),
``GET /v1/models``, ``GET /healthz``, ``GET /metrics`` (requests and tokens per model name).

The served names are the model names a request may carry (any name when none are given, as
llama.cpp's server does; an unknown name is refused with OpenAI's ``model_not_found``
otherwise, as vLLM does). The tool parser ``chatml`` turns ``<tool_call>`` blocks into
structured ``tool_calls``; ``none`` returns the generated text as it is, as a server without a
tool parser does, leaving the calls for the client to read from the text.

A request with ``logprobs`` gets each generated token's log-probability (``choices[0].logprobs.content``,
OpenAI's shape, each entry with its token ``id`` too); with ``return_token_ids``, the token ids of the
prompt as templated and of the completion (``prompt_token_ids``, ``choices[0].token_ids``, as vLLM
names them)."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch
import uvicorn
from fastapi import FastAPI, HTTPException, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, generate_latest
from pydantic import BaseModel, ConfigDict, Field

from skillgym_trainer.sft.chat_template import IM_END, parse_assistant_text
from skillgym_trainer.sft.models import load_pretrained


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="allow")

    model: str | None = None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(0.0, ge=0)
    top_p: float = Field(1.0, gt=0, le=1)
    seed: int | None = None
    # OpenAI's per-token log-probabilities, and the token ids as vLLM returns them: what an RL
    # trainer needs of each model turn, in this model's own tokenizer
    logprobs: bool = False
    return_token_ids: bool = False


def _normalise_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content parts become text; the template reads plain strings."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if part.get("type") == "text")
        out.append({**message, "content": content or ""})
    return out


ToolParser = Literal["chatml", "none"]
TOOL_PARSERS: tuple[ToolParser, ...] = ("chatml", "none")


@dataclass(frozen=True)
class ServeOptions:
    max_new_tokens: int = 256
    served_names: tuple[str, ...] = ()
    tool_parser: ToolParser = "chatml"


class ChatModel:
    def __init__(self, model_dir: Path, max_new_tokens: int = 256, tool_parser: ToolParser = "chatml") -> None:
        self.name = Path(model_dir).name
        self.tool_parser = tool_parser
        self.model, self.tokenizer = load_pretrained(model_dir)
        self.model.eval()
        self.max_new_tokens = max_new_tokens
        self._lock = threading.Lock()
        self.end_id = self.tokenizer.convert_tokens_to_ids(IM_END)

    def complete(self, request: ChatRequest) -> dict[str, Any]:
        prompt: Any = self.tokenizer.apply_chat_template(
            _normalise_messages(request.messages),
            tools=list(request.tools) if request.tools else None,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=True,
            return_tensors="pt",
        )
        limit = request.max_completion_tokens or request.max_tokens or self.max_new_tokens
        sampling: dict[str, Any] = {"do_sample": request.temperature > 0}
        if request.temperature > 0:
            sampling.update(temperature=request.temperature, top_p=request.top_p)
        with self._lock, torch.no_grad():
            if request.seed is not None:
                torch.manual_seed(request.seed)
            generate: Any = self.model.generate
            traced = request.logprobs or request.return_token_ids
            output: Any = generate(
                **prompt,
                max_new_tokens=limit,
                eos_token_id=self.end_id,
                pad_token_id=self.tokenizer.pad_token_id or self.end_id,
                **({"return_dict_in_generate": True, "output_logits": True} if traced else {}),
                **sampling,
            )
        sequences = output.sequences if traced else output
        prompt_len = int(prompt["input_ids"].shape[1])
        generated = sequences[0, prompt_len:].tolist()
        finished = bool(generated) and generated[-1] == self.end_id
        text = str(self.tokenizer.decode(generated, skip_special_tokens=False))
        if self.tool_parser == "none":
            message: dict[str, Any] = {"role": "assistant", "content": text.split(IM_END, 1)[0]}
        else:
            message = parse_assistant_text(text)
        if message.get("reasoning_content") is None:
            message.pop("reasoning_content", None)
        reason = "tool_calls" if message.get("tool_calls") else ("stop" if finished else "length")
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": reason}
        extra: dict[str, Any] = {}
        if request.return_token_ids:
            choice["token_ids"] = generated
            extra["prompt_token_ids"] = prompt["input_ids"][0].tolist()
        if request.logprobs:
            choice["logprobs"] = {"content": self._token_logprobs(generated, output.logits)}
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or self.name,
            "choices": [choice],
            **extra,
            "usage": {
                "prompt_tokens": prompt_len,
                "completion_tokens": len(generated),
                "total_tokens": prompt_len + len(generated),
            },
        }


    def _token_logprobs(self, generated: list[int], logits: Sequence[torch.Tensor]) -> list[dict[str, Any]]:
        """Each generated token's log-probability under the model's own distribution (the logits
        before temperature or top-p), in OpenAI's ``logprobs.content`` shape plus its ``id``."""
        entries = []
        for token_id, step in zip(generated, logits, strict=True):
            logprob = float(torch.log_softmax(step[0].float(), dim=-1)[token_id])
            token = str(self.tokenizer.decode([token_id], skip_special_tokens=False))
            entries.append({"id": token_id, "token": token, "logprob": logprob,
                            "bytes": list(token.encode("utf-8")), "top_logprobs": []})
        return entries


class _ServerMetrics:
    """Counters of one app on its own registry, so several servers can live in one process."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("skillgym_model_requests", "Chat completion requests by requested model name "
                                "and outcome", ["model", "outcome"], registry=self.registry)
        self.tokens = Counter("skillgym_model_tokens", "Tokens by model name and kind (prompt, completion)",
                              ["model", "kind"], registry=self.registry)


def _model_not_found(name: str, served: Sequence[str]) -> JSONResponse:
    return JSONResponse(status_code=404, content={"error": {
        "message": f"the model {name!r} is not served here (served: {', '.join(served)})",
        "type": "invalid_request_error", "param": "model", "code": "model_not_found"}})


def create_app(model_dir: str | Path, options: ServeOptions | None = None) -> FastAPI:
    options = options or ServeOptions()
    chat = ChatModel(Path(model_dir), options.max_new_tokens, options.tool_parser)
    served = list(options.served_names) or [chat.name]
    counters = _ServerMetrics()
    app = FastAPI(title="skillgym student")

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": name, "object": "model", "owned_by": "skillgym"} for name in served]}

    @app.get("/metrics")
    def metrics() -> Response:
        return Response(content=generate_latest(counters.registry), media_type=CONTENT_TYPE_LATEST)

    @app.post("/v1/chat/completions", response_model=None)
    def completions(request: ChatRequest) -> dict[str, Any] | JSONResponse:
        name = request.model or served[0]
        if options.served_names and name not in options.served_names:
            counters.requests.labels(name, "model_not_found").inc()
            return _model_not_found(name, served)
        if getattr(request, "stream", False):
            counters.requests.labels(name, "refused").inc()
            raise HTTPException(status_code=400, detail="streaming is not supported by this server")
        if not request.messages:
            counters.requests.labels(name, "refused").inc()
            raise HTTPException(status_code=400, detail="messages must not be empty")
        result = chat.complete(request)
        counters.requests.labels(name, "ok").inc()
        counters.tokens.labels(name, "prompt").inc(result["usage"]["prompt_tokens"])
        counters.tokens.labels(name, "completion").inc(result["usage"]["completion_tokens"])
        return result

    return app


def serve_model(model_dir: str | Path, host: str = "127.0.0.1", port: int = 8008, options: ServeOptions | None = None) -> None:
    """Blocking: serve ``model_dir`` until interrupted."""
    uvicorn.run(create_app(model_dir, options), host=host, port=port, log_level="warning")
