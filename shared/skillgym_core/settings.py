"""Settings shared by every service: which backends to use and how to reach them.

Each service defines its own ``Settings`` subclass (env prefix ``SKILLGYM_``); backends are
chosen here by name, never by code edits."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class CommonSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_", extra="ignore")

    bus: Literal["memory", "kafka"] = "memory"
    kafka_bootstrap: str = "127.0.0.1:9092"
    kafka_session_timeout_ms: int = 6000
    kafka_heartbeat_interval_ms: int = 1000
    kafka_topic_partitions: int = 3
    kafka_linger_ms: int = Field(5, ge=0, description="how long the producer waits to fill a batch")
    kafka_batch_bytes: int = Field(256 * 1024, ge=1024, description="the producer's batch size per partition")
    kafka_compression: Literal["none", "gzip"] = Field("none", description="compression of produced batches")
    topic_prefix: str = Field("", description="prefix for every topic and consumer group on a shared broker")
    event_mode: Literal["binary", "structured"] = Field(
        "binary", description="CloudEvents content mode of published events (consumers read either, and envelopes)"
    )

    store: Literal["local", "s3"] = "local"
    store_root: Path = Path("out/store")
    s3_endpoint: str = "127.0.0.1:9000"
    s3_access_key: SecretStr = SecretStr("")
    s3_secret_key: SecretStr = SecretStr("")
    s3_bucket: str = "skillgym"
    s3_secure: bool = False
    s3_region: str = "us-east-1"

    sandbox: Literal["local", "kubernetes", "container"] = "local"
    sandbox_uid: int = Field(
        2_000_000, ge=1, description="unprivileged host uid sandboxed code runs as (local: when started by root; "
                                     "container: the container user)"
    )
    container_engine_url: str | None = Field(
        None, description="Docker Engine API of the container sandbox (Podman's or Docker's socket; default: the "
                          "first of /run/podman/podman.sock, /var/run/docker.sock)"
    )
    sandbox_allow_unsafe: bool = Field(
        False, description="run the local sandbox even where a mandatory protection is missing (never in production)"
    )

    env_build: bool = Field(True, description="build declared task environments (local: a cached venv; container: "
                                              "the task's Dockerfile)")
    k8s_build_images: bool = Field(
        False, description="on Kubernetes, have the operator build each task's Dockerfile into the cluster's registry "
                           "(needs a registry the nodes pull from); off: runs use the operator's default task image")
    env_cache: Path = Field(Path("out/env-cache"), description="cache of built task environments")
    env_index_url: str | None = Field(None, description="package index for environment builds")
    env_find_links: list[str] = Field(default_factory=list, description="extra wheel directories/URLs")
    env_no_index: bool = Field(False, description="install only from env_find_links")

    max_attempts: int = Field(3, ge=1, description="handler attempts before an event goes to <topic>.dlq")
    worker_concurrency: int = Field(
        default_factory=lambda: min(4, os.cpu_count() or 1), ge=1,
        description="records of one polled batch a sandbox-bound stage handles at once (one lane per key)",
    )
    retry_backoff_s: float = Field(0.2, ge=0)
    retry_backoff_max_s: float = Field(5.0, ge=0)

    metrics_port: int = 8000
    pushgateway_url: str = Field("", description="where one-shot jobs (ingest) push their metrics; empty = off")
    log_level: str = "INFO"
    correlation_id: str = "run"
