"""Reach the model endpoint from a sandbox that has no network.

The host listens on a unix socket inside a directory mounted into the sandbox and pipes every
connection to the endpoint's TCP address. Inside the sandbox, :data:`INSIDE_FORWARDER` (run with
the sandbox's Python) listens on its private loopback and pipes connections to that socket. Only
this one endpoint is reachable; the sandbox still has no other network."""

from __future__ import annotations

import contextlib
import socket
import threading
import urllib.parse
from pathlib import Path
from types import TracebackType

from skillgym_sampler.errors import HarnessError

INSIDE_PORT = 18080
SOCKET_NAME = "llm.sock"

INSIDE_FORWARDER = '''
import socket, sys, threading
host, port, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def pipe(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass

def serve(client):
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    upstream.connect(path)
    threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()
    pipe(upstream, client)

server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind((host, port))
server.listen(64)
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
'''


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


class EndpointRelay:
    """Host side: ``<directory>/llm.sock`` → the endpoint of ``base_url`` (plain HTTP)."""

    def __init__(self, base_url: str, directory: Path) -> None:
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme != "http" or not parsed.hostname:
            raise HarnessError(
                f"the sandbox relay forwards plain-HTTP endpoints only, got {base_url!r}", reason="relay_scheme"
            )
        self.upstream = (parsed.hostname, parsed.port or 80)
        self.path_prefix = parsed.path.rstrip("/")
        self.socket_path = Path(directory) / SOCKET_NAME
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="llm-relay")

    @property
    def inside_base_url(self) -> str:
        return f"http://127.0.0.1:{INSIDE_PORT}{self.path_prefix}"

    def start(self) -> EndpointRelay:
        self._server.bind(str(self.socket_path))
        self._server.listen(64)
        self._thread.start()
        return self

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.upstream, timeout=30)
            upstream.settimeout(None)
        except OSError:
            client.close()
            return
        forward = threading.Thread(target=_pipe, args=(client, upstream), daemon=True)
        forward.start()
        _pipe(upstream, client)
        forward.join(timeout=5)
        client.close()
        upstream.close()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self.socket_path.unlink()

    def __enter__(self) -> EndpointRelay:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def start_forwarder_shell(python: str, forwarder_path: str, socket_path: str) -> str:
    """Shell lines that start the inside forwarder and wait until it accepts connections."""
    return (
        f"{python} {forwarder_path} 127.0.0.1 {INSIDE_PORT} {socket_path} >/dev/null 2>&1 &\n"
        f"for _ in $(seq 1 100); do (exec 3<>/dev/tcp/127.0.0.1/{INSIDE_PORT}) 2>/dev/null && break; "
        "sleep 0.05; done\n"
    )
