"""Real Kafka, S3 and Prometheus servers for integration tests.

Every server runs as a child process bound to 127.0.0.1 on free ports, keeps its
files and log inside the given work directory and is stopped by its own PID.
Binaries come from ``scripts/install-services.sh`` (``~/.cache/skillgym/services/``).
No pytest dependency: usable from scripts as well as from fixtures.
"""

from __future__ import annotations

import atexit
import base64
import ctypes
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from subprocess import DEVNULL, STDOUT, Popen
from types import TracebackType
from typing import Any, Self

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVICES_DIR = Path(os.environ.get("SKILLGYM_SERVICES_DIR")
                    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "skillgym" / "services")
INSTALL_HINT = "run scripts/install-services.sh first"


class ServiceStartError(RuntimeError):
    """A test service could not be started (or did not become ready in time)."""

    def __init__(self, service: str, reason: str, log_path: Path | None = None) -> None:
        self.service = service
        self.reason = reason
        self.log_path = log_path
        tail = _tail(log_path) if log_path else ""
        where = f"\n--- last lines of {log_path} ---\n{tail}" if tail else ""
        super().__init__(f"{service} failed to start: {reason}{where}")


DEFERRED_DIR = SERVICES_DIR / "deferred"


def await_deferred_install(component: str, timeout: float = 3600.0, directory: Path = DEFERRED_DIR) -> None:
    """Wait for a component that ``install-services.sh --defer-builds`` builds in the background
    (``s3``, ``llama-server``); return at once when it was not deferred."""
    status_path, log_path = directory / f"{component}.status", directory / f"{component}.log"
    deadline = time.monotonic() + timeout
    while True:
        try:
            status = status_path.read_text().strip()
        except FileNotFoundError:
            return
        if status == "ok":
            return
        if status != "running":
            raise ServiceStartError(component, f"its background install {status}", log_path)
        if not _deferred_job_alive(directory):
            if status_path.read_text().strip() == "running":
                raise ServiceStartError(component, "its background install stopped before finishing", log_path)
            continue
        if time.monotonic() > deadline:
            raise ServiceStartError(component, f"its background install still runs after {timeout:.0f} s", log_path)
        time.sleep(2)


def _deferred_job_alive(directory: Path) -> bool:
    try:
        os.kill(int((directory / "job.pid").read_text()), 0)
    except (FileNotFoundError, ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _bind(port: int) -> int | None:
    """Bind 127.0.0.1:``port`` (0: any) and return the bound port, or None when it is taken."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except (OSError, OverflowError):
            return None
        return int(sock.getsockname()[1])


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    port = _bind(0)
    assert port is not None
    return port


def _free_ports(count: int, also_free_offset: int | None = None) -> list[int]:
    """Distinct free ports; with ``also_free_offset`` port+offset must be free too."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in ports and (also_free_offset is None or _bind(port + also_free_offset)):
            ports.append(port)
    return ports


class _Service:
    """A started child process, its log, and clean stopping by PID."""

    name = "service"

    def __init__(self, workdir: Path, process: Popen[bytes], log_path: Path, port: int) -> None:
        self.workdir = workdir
        self.process = process
        self.log_path = log_path
        self.port = port
        _RUNNING.add(self)

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout: float = 20.0) -> None:
        """Terminate the process we started (SIGTERM, then SIGKILL); idempotent."""
        _RUNNING.discard(self)
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _wait_ready(self, check: Callable[[], bool], timeout: float) -> None:
        deadline = time.monotonic() + timeout
        last_error = "not ready"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                raise ServiceStartError(self.name, f"exited with code {self.process.returncode}", self.log_path)
            try:
                if check():
                    return
            except Exception as exc:  # any failure just means "not ready yet"
                last_error = f"{type(exc).__name__}: {exc}"
            time.sleep(0.25)
        self.stop()
        raise ServiceStartError(self.name, f"not ready after {timeout:.0f}s ({last_error})", self.log_path)


_RUNNING: set[_Service] = set()


@atexit.register
def _stop_leftovers() -> None:
    for service in list(_RUNNING):
        service.stop(timeout=5)


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the test process dies, so no server outlives a killed run."""
    if sys.platform == "linux":
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _spawn(
    name: str, workdir: Path, argv: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[Popen[bytes], Path]:
    log_path = workdir / f"{name}.log"
    with log_path.open("ab") as log:
        try:
            full_env = {**os.environ, **(env or {})}
            process = Popen(
                argv,
                cwd=workdir,
                stdin=DEVNULL,
                stdout=log,
                stderr=STDOUT,
                env=full_env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        except OSError as exc:
            raise ServiceStartError(name, f"cannot execute {argv[0]}: {exc}", log_path) from exc
    return process, log_path


def _service_dir(workdir: Path, name: str) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=workdir))


# --------------------------------------------------------------------------- Kafka

KAFKA_LIBS = SERVICES_DIR / "kafka" / "libs"
KAFKA_JVM_OPTS = ["-Xmx512m", "-Xms128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true"]


class KafkaServer(_Service):
    """A single-node KRaft Kafka (broker + controller); ``bootstrap`` is ``127.0.0.1:PORT``."""

    name = "kafka"

    def __init__(self, workdir: Path, process: Popen[bytes], log_path: Path, port: int, argv: list[str]) -> None:
        super().__init__(workdir, process, log_path, port)
        self.argv = argv  # how it was started, for restart()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def restart(self, timeout: float = 120.0) -> None:
        """Start the broker again after :meth:`stop`: same ports, data directory and cluster id
        (an outage and its end, as clients see them)."""
        self.stop()
        self.process, self.log_path = _spawn(self.name, self.workdir, self.argv)
        _RUNNING.add(self)
        self._wait_ready(lambda: _kafka_ready(self.bootstrap), timeout)


def _kafka_properties(data_dir: Path, port: int, controller_port: int) -> str:
    props = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"PLAINTEXT://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
        "log.dirs": str(data_dir),
        "num.partitions": "1",
        "auto.create.topics.enable": "true",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "1",
        "group.initial.rebalance.delay.ms": "0",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "transaction.state.log.num.partitions": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "num.network.threads": "2",
        "num.io.threads": "2",
        "num.recovery.threads.per.data.dir": "1",
    }
    return "".join(f"{key}={value}\n" for key, value in props.items())


def _java() -> str:
    java_home = os.environ.get("JAVA_HOME")
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java")
    if not java or not Path(java).exists():
        raise ServiceStartError("kafka", "no java on PATH (Java 17 is required)")
    return java


def start_kafka(workdir: Path, timeout: float = 120.0) -> KafkaServer:
    """Format KRaft storage with a new cluster id and start a broker+controller."""
    if not any(KAFKA_LIBS.glob("kafka_2.13-*.jar")):
        raise ServiceStartError("kafka", f"no Kafka jars in {KAFKA_LIBS}; {INSTALL_HINT}")
    home = _service_dir(workdir, "kafka")
    port, controller_port = _free_ports(2)
    config = home / "server.properties"
    config.write_text(_kafka_properties(home / "data", port, controller_port))
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    java = [_java(), *KAFKA_JVM_OPTS, "-cp", f"{KAFKA_LIBS}/*"]
    fmt_log = home / "kafka-format.log"
    with fmt_log.open("wb") as log:
        # "=": an id may start with "-" (base64), which would otherwise read as an option
        fmt = [*java, "kafka.tools.StorageTool", "format", f"--cluster-id={cluster_id}", "-c", str(config)]
        try:
            code = subprocess.run(fmt, stdout=log, stderr=STDOUT, stdin=DEVNULL, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            code = -1
    if code != 0:
        raise ServiceStartError("kafka", f"formatting KRaft storage failed (exit {code})", fmt_log)
    argv = [*java, "kafka.Kafka", str(config)]
    process, log_path = _spawn("kafka", home, argv)
    server = KafkaServer(home, process, log_path, port, argv)
    server._wait_ready(lambda: _kafka_ready(server.bootstrap), timeout)
    return server


def _kafka_ready(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=1):
        pass  # cheap check first: the admin client backs off for seconds on refused connections
    from kafka.admin import KafkaAdminClient  # type: ignore[import-untyped,unused-ignore]

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, client_id="readiness")
    try:
        cluster = admin.describe_cluster()
        return bool(cluster.get("brokers"))
    finally:
        admin.close()


# --------------------------------------------------------------------------- S3


class S3Server(_Service):
    """An S3 server (MinIO, else SeaweedFS) with real credentials; ``endpoint`` is ``127.0.0.1:PORT``."""

    name = "s3"

    def __init__(
        self,
        workdir: Path,
        process: Popen[bytes],
        log: Path,
        port: int,
        keys: tuple[str, str],
        kind: str,
        launch: tuple[list[str], dict[str, str]],
    ):
        super().__init__(workdir, process, log, port)
        self.endpoint = f"127.0.0.1:{port}"
        self.url = f"http://{self.endpoint}"
        self.access_key, self.secret_key = keys
        self.kind = kind
        self.launch = launch  # argv and environment it was started with, for restart()

    def client(self) -> Any:
        """A ``minio.Minio`` client for this server (plain HTTP)."""
        from minio import Minio

        return Minio(self.endpoint, access_key=self.access_key, secret_key=self.secret_key, secure=False)

    def restart(self, timeout: float = 60.0) -> None:
        """Start the server again after :meth:`stop`: same binary, port, data and credentials
        (an outage and its end, as clients see them)."""
        self.stop()
        argv, env = self.launch
        self.process, self.log_path = _spawn(self.name, self.workdir, argv, env)
        _RUNNING.add(self)
        self._wait_ready(lambda: _s3_ready(self), timeout)


def s3_binary() -> tuple[str, Path] | None:
    """``("minio"|"seaweedfs", path)`` of the installed S3 server: MinIO unless
    ``SKILLGYM_S3_SERVER=seaweedfs`` (``minio`` forces MinIO)."""
    choice = os.environ.get("SKILLGYM_S3_SERVER", "auto")
    minio = SERVICES_DIR / "bin" / "minio"
    if choice != "seaweedfs" and minio.exists():
        return "minio", minio
    weed = REPO_ROOT / ".venv" / "bin" / "weed"
    found = str(weed) if weed.exists() else shutil.which("weed")
    return ("seaweedfs", Path(found)) if found and choice != "minio" else None


def start_s3(workdir: Path, timeout: float = 60.0) -> S3Server:
    """Start MinIO (or SeaweedFS) with fresh random credentials."""
    await_deferred_install("s3")
    binary = s3_binary()
    if binary is None:
        raise ServiceStartError("s3", f"neither {SERVICES_DIR}/bin/minio nor weed is installed; {INSTALL_HINT}")
    kind, path = binary
    home = _service_dir(workdir, "s3")
    access_key, secret_key = f"test{secrets.token_hex(6)}", secrets.token_hex(20)
    if kind == "minio":
        port, console = _free_ports(2)
        options = f"--address 127.0.0.1:{port} --console-address 127.0.0.1:{console} --quiet"
        argv = [str(path), "server", str(home / "data"), *options.split()]
        env = {"MINIO_ROOT_USER": access_key, "MINIO_ROOT_PASSWORD": secret_key}
        env |= {"MINIO_BROWSER": "off", "MINIO_UPDATE": "off", "MINIO_CI_CD": "1"}
    else:
        names = ["s3", "master", "volume", "filer", "admin", "s3.port.iceberg", "s3.port.lance", "debug"]
        ports = dict(zip(names, _free_ports(len(names), also_free_offset=10000), strict=True))
        port = ports["s3"]
        (home / "data").mkdir()
        argv = [str(path), "mini", f"-dir={home / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1"]
        argv += ["-admin.ui=false", "-webdav=false"]
        argv += [f"-{n}={p}" if "." in n else f"-{n}.port={p}" for n, p in ports.items()]
        env = {"AWS_ACCESS_KEY_ID": access_key, "AWS_SECRET_ACCESS_KEY": secret_key}
    process, log_path = _spawn("s3", home, argv, env)
    server = S3Server(home, process, log_path, port, (access_key, secret_key), kind, (argv, env))
    server._wait_ready(lambda: _s3_ready(server), timeout)
    return server


def _s3_ready(server: S3Server) -> bool:
    server.client().list_buckets()
    return True


# --------------------------------------------------------------------------- Prometheus


class PrometheusServer(_Service):
    """A Prometheus scraping the given targets every second; ``url`` is ``http://127.0.0.1:PORT``."""

    name = "prometheus"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, path: str, **params: str) -> Any:
        """GET ``/api/v1/<path>`` and return its ``data`` (raises on an API error)."""
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as response:
            body = json.load(response)
        if body.get("status") != "success":
            raise RuntimeError(f"Prometheus {path} failed: {body}")
        return body["data"]

    def query(self, promql: str) -> list[Any]:
        """Instant query; the ``result`` list (for a vector: ``[{"metric": .., "value": [ts, "v"]}]``)."""
        data = self.api("query", query=promql)
        return list(data["result"]) if data["resultType"] in ("vector", "matrix") else [data["result"]]

    def wait_for(self, promql: str, timeout: float = 30.0) -> list[Any]:
        """Poll ``query`` until it returns something (the first scrape lands a few seconds after start)."""
        deadline = time.monotonic() + timeout
        while True:
            result = self.query(promql)
            if result or time.monotonic() > deadline:
                return result
            time.sleep(0.5)


def _prometheus_config(scrape_targets: Sequence[str], rule_files: Sequence[Path]) -> str:
    lines = ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s", "  evaluation_interval: 1s"]
    if rule_files:
        lines += ["rule_files:", *(f"  - {json.dumps(str(Path(f).resolve()))}" for f in rule_files)]
    lines += ["scrape_configs:", "  - job_name: test", "    honor_labels: true", "    static_configs:", "      - targets:"]
    lines += [f"          - {json.dumps(target)}" for target in scrape_targets] or ["          []"]
    return "\n".join(lines) + "\n"


def start_prometheus(
    workdir: Path, scrape_targets: Sequence[str], rule_files: Sequence[Path] = (), timeout: float = 60.0
) -> PrometheusServer:
    """Start Prometheus scraping ``scrape_targets`` (``host:port``) every second with the given rules."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise ServiceStartError("prometheus", f"prometheus is not on PATH; {INSTALL_HINT}")
    home = _service_dir(workdir, "prometheus")
    config = home / "prometheus.yml"
    config.write_text(_prometheus_config(scrape_targets, rule_files))
    port = free_port()
    argv = [binary, f"--config.file={config}", f"--storage.tsdb.path={home / 'data'}"]
    argv += [f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1h"]
    process, log_path = _spawn("prometheus", home, argv)
    server = PrometheusServer(home, process, log_path, port)
    server._wait_ready(lambda: _http_ok(f"{server.url}/-/ready"), timeout)
    return server


class PushgatewayServer(_Service):
    """Prometheus Pushgateway: where one-shot jobs (``skillgym ingest``) leave their metrics."""

    name = "pushgateway"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"


def start_pushgateway(workdir: Path, timeout: float = 30.0) -> PushgatewayServer:
    binary = shutil.which("prometheus-pushgateway")
    if binary is None:
        raise ServiceStartError("pushgateway", f"prometheus-pushgateway is not on PATH; {INSTALL_HINT}")
    home = _service_dir(workdir, "pushgateway")
    port = free_port()
    process, log_path = _spawn("pushgateway", home, [binary, f"--web.listen-address=127.0.0.1:{port}"])
    server = PushgatewayServer(home, process, log_path, port)
    server._wait_ready(lambda: _http_ok(f"{server.url}/-/ready"), timeout)
    return server


def _http_ok(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=5) as response:
        return int(response.status) == 200
