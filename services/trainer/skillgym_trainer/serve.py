"""Serve a trained student on an OpenAI-compatible chat endpoint so the sampler can run
agents against it: ``POST /v1/chat/completions`` (tools and ``tool_calls`` included),
``GET /v1/models``, ``GET /healthz``."""

from __future__ import annotations

import threading
import time
import uuid
from pathlib import Path
from typing import Any

import torch
import uvicorn
from fastapi import FastAPI, HTTPException
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


def _normalise_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Content parts become text; the template reads plain strings."""
    out = []
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content if part.get("type") == "text")
        out.append({**message, "content": content or ""})
    return out


class ChatModel:
    def __init__(self, model_dir: Path, max_new_tokens: int = 256) -> None:
        self.name = Path(model_dir).name
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
            output: Any = generate(
                **prompt,
                max_new_tokens=limit,
                eos_token_id=self.end_id,
                pad_token_id=self.tokenizer.pad_token_id or self.end_id,
                **sampling,
            )
        prompt_len = int(prompt["input_ids"].shape[1])
        generated = output[0, prompt_len:].tolist()
        finished = bool(generated) and generated[-1] == self.end_id
        text = str(self.tokenizer.decode(generated, skip_special_tokens=False))
        message = parse_assistant_text(text)
        if message.get("reasoning_content") is None:
            message.pop("reasoning_content", None)
        reason = "tool_calls" if message.get("tool_calls") else ("stop" if finished else "length")
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex[:16]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or self.name,
            "choices": [{"index": 0, "message": message, "finish_reason": reason}],
            "usage": {
                "prompt_tokens": prompt_len,
                "completion_tokens": len(generated),
                "total_tokens": prompt_len + len(generated),
            },
        }


def create_app(model_dir: str | Path, max_new_tokens: int = 256) -> FastAPI:
    chat = ChatModel(Path(model_dir), max_new_tokens)
    app = FastAPI(title="skillgym student")

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/models")
    def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": chat.name, "object": "model", "owned_by": "skillgym"}]}

    @app.post("/v1/chat/completions")
    def completions(request: ChatRequest) -> dict[str, Any]:
        if getattr(request, "stream", False):
            raise HTTPException(status_code=400, detail="streaming is not supported by this server")
        if not request.messages:
            raise HTTPException(status_code=400, detail="messages must not be empty")
        return chat.complete(request)

    return app


def serve_model(model_dir: str | Path, host: str = "127.0.0.1", port: int = 8008, max_new_tokens: int = 256) -> None:
    """Blocking: serve ``model_dir`` until interrupted."""
    uvicorn.run(create_app(model_dir, max_new_tokens), host=host, port=port, log_level="warning")
