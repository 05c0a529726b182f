"""Close the loop: serve a model on an OpenAI-compatible endpoint and run the sampler's built-in
agent on validated tasks, so pass rates before and after training can be compared."""

from __future__ import annotations

import json
import socket
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from skillgym_core.context import ServiceContext
from skillgym_core.contracts.events import Envelope, EnvValidated, TrajectoryVerified
from skillgym_core.sandbox.janitor import remove_tree
from skillgym_core.sandbox.local import LocalSandbox
from skillgym_core.store.base import Store
from skillgym_core.store.local import LocalStore, open_run_store

from skillgym.evaluation_split import EvaluationError, comparisons, held_out, train_skills


@dataclass(frozen=True)
class ValidatedTask:
    task_id: str
    skill_id: str
    package_key: str
    category: str | None


def validation_records(store: Store, skills: Sequence[str] | None = None) -> list[tuple[ValidatedTask, dict[str, Any]]]:
    """Every task the validator accepted with its validation record, optionally only those of the
    given skill ids."""
    found = []
    for key in store.list("tasks/"):
        if not key.endswith("/validation.json"):
            continue
        record = json.loads(store.get_bytes(key))
        if not record.get("valid") or (skills and record.get("skill_id") not in skills):
            continue
        task = ValidatedTask(record["task_id"], record["skill_id"], record["package_key"], record.get("category"))
        found.append((task, record))
    return found


def validated_tasks(store: Store, skills: Sequence[str] | None = None) -> list[ValidatedTask]:
    """Every task the validator accepted, optionally only those of the given skill ids."""
    return [task for task, _ in validation_records(store, skills)]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def served_model(model_dir: Path, max_new_tokens: int = 256, *, served_names: Sequence[str] = (),
                 tool_parser: str = "chatml") -> Iterator[str]:
    """Serve ``model_dir`` on 127.0.0.1 for the duration; yields the ``/v1`` base URL."""
    from skillgym_trainer.serve import TOOL_PARSERS, ServeOptions, create_app

    parser = next((name for name in TOOL_PARSERS if name == tool_parser), None)
    if parser is None:
        raise ValueError(f"tool parser {tool_parser!r} is not one of {TOOL_PARSERS}")
    options = ServeOptions(max_new_tokens=max_new_tokens, served_names=tuple(served_names), tool_parser=parser)
    port = _free_port()
    server = uvicorn.Server(
        uvicorn.Config(create_app(model_dir, options), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(base + "/healthz", timeout=2).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.2)
    else:
        server.should_exit = True
        raise RuntimeError(f"model server for {model_dir} did not come up")
    try:
        yield base + "/v1"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def evaluate_endpoint(
    run_store: Store, tasks: Sequence[ValidatedTask], base_url: str, model_name: str, out_dir: Path, *, max_steps: int = 8,
    conditions: Sequence[str] = ("with", "without"),
) -> dict[str, Any]:
    """Run the built-in agent once on each task per skill condition (provided, withheld); every
    run verified by the trusted verifier."""
    from skillgym_sampler.service import SamplerService
    from skillgym_sampler.settings import SamplerSettings

    store = LocalStore(out_dir / "store")
    scratch = Path(tempfile.mkdtemp(prefix="eval-"))
    try:
        ctx = ServiceContext(store=store, sandbox=LocalSandbox(), scratch=scratch)
        settings = SamplerSettings(
            harnesses=["builtin"], llm_base_url=base_url, llm_model=model_name, max_steps=max_steps,
            skill_conditions=list(conditions), hardening_threshold=1.0, max_hardening_rounds=0,
        )
        sampler = SamplerService(ctx, settings)
        results: list[dict[str, Any]] = []
        for task in tasks:
            store.put_bytes(task.package_key, run_store.get_bytes(task.package_key))
            event = Envelope.wrap(
                EnvValidated(task_id=task.task_id, skill_id=task.skill_id, package_key=task.package_key, valid=True,
                             category=task.category),
                producer="evaluate",
                correlation_id=model_name,
            )
            for out in sampler.handle(event):
                if isinstance(out, TrajectoryVerified):
                    results.append({"task_id": out.task_id, "skill_provided": out.skill_provided,
                                    "passed": out.passed, "reward": out.reward,
                                    "failure_type": out.failure_type, "trajectory_id": out.trajectory_id})
    finally:
        remove_tree(scratch)
    passed = sum(1 for r in results if r["passed"])
    return {"model": model_name, "runs": len(results), "passed": passed,
            "pass_rate": passed / len(results) if results else 0.0, "results": results}


def open_evaluation_store(run_dir: Path) -> Store:
    """The store of a run directory (``DIR/store``) or a store root; never creates one."""
    return open_run_store(run_dir, "tasks", EvaluationError)


def evaluate_models(
    run_dir: Path, models: dict[str, Path], out_dir: Path, *, skills: Sequence[str] | None = None, max_steps: int = 8,
    dataset: Path | None = None, conditions: Sequence[str] = ("with", "without"),
) -> dict[str, Any]:
    """Serve each model the same way and run it with the same harness on the same validated tasks
    (only skills the student was not trained on when ``dataset`` is given); the first model is the
    base the others are compared with."""
    run_store = open_evaluation_store(run_dir)
    missing = {name: str(path) for name, path in models.items() if not path.is_dir()}
    if missing:
        raise EvaluationError(
            f"no such model folder: {', '.join(missing.values())}", reason="model_not_found", models=missing
        )
    tasks = validated_tasks(run_store, skills)
    trained: set[str] = set()
    if dataset is not None:
        trained = train_skills(dataset)
        keep = held_out({t.skill_id for t in tasks}, trained, skills)
        tasks = [t for t in tasks if t.skill_id in keep]
    if not tasks:
        raise EvaluationError(
            f"{run_dir} holds no validated tasks to evaluate on",
            reason="no_validated_tasks",
            path=str(run_dir),
            skills=list(skills or []),
        )
    report: dict[str, Any] = {"tasks": [t.task_id for t in tasks], "skills": sorted({t.skill_id for t in tasks}),
                              "trained_skills_excluded": sorted(trained), "conditions": list(conditions), "models": {}}
    for name, model_dir in models.items():
        with served_model(model_dir) as base_url:
            report["models"][name] = evaluate_endpoint(
                run_store, tasks, base_url, name, out_dir / name, max_steps=max_steps, conditions=conditions
            )
    report["comparisons"] = comparisons({name: entry["results"] for name, entry in report["models"].items()})
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "evaluation.json").write_text(json.dumps(report, indent=2))
    return report
