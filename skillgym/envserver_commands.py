"""``skillgym serve-env``: serve validated tasks as RL environments over HTTP."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def _cmd_serve_env(args: argparse.Namespace) -> int:
    from skillgym_envserver.serve import serve_env
    from skillgym_envserver.settings import EnvServerSettings

    overrides: dict[str, Any] = {"host": args.host, "port": args.port, "store_root": args.store,
                                 "state_dir": args.state_dir, "max_open_episodes": args.max_episodes}
    settings = EnvServerSettings(**{k: v for k, v in overrides.items() if v is not None})
    serve_env(settings)
    return 0


def register(sub: Any) -> None:
    serve = sub.add_parser(
        "serve-env",
        help="serve validated tasks as RL environments (episodes, tool steps, verified rewards) over HTTP",
        description="Every validated task in the store becomes an environment: POST /v1/episodes starts one in its "
                    "own sandbox, /step runs a tool call, /finish runs the trusted verifier and returns the reward. "
                    "Other settings come from SKILLGYM_* and SKILLGYM_ENVSERVER_* variables.",
    )  # fmt: skip
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8090)")
    serve.add_argument("--store", type=Path, metavar="DIR", help="the local store holding validated tasks")
    serve.add_argument("--state-dir", type=Path, metavar="DIR",
                       help="episodes and workspaces, kept across restarts (default out/envserver)")
    serve.add_argument("--max-episodes", type=int, metavar="N", help="open episodes at once (default 32)")
    serve.set_defaults(func=_cmd_serve_env)
