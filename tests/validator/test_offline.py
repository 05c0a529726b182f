"""What the usual clients print when a run reaches for the network, told apart from other failures."""

from __future__ import annotations

import pytest
from skillgym_validator.offline import network_failure


@pytest.mark.parametrize("line", [
    "curl: (6) Could not resolve host: astral.sh",
    "curl: (7) Failed to connect to pypi.org port 443 after 3 ms: Couldn't connect to server",
    "W: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'",
    "WARNING: Retrying ... NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection>: Failed to establish a new connection: [Errno -3] Temporary failure in name resolution')",
    "wget: unable to resolve host address 'example.com'",
    "npm ERR! request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN registry.npmjs.org",
    "error: Request failed after 3 retries: error sending request for url (https://pypi.org/simple/pytest/)",
])
def test_network_failures_are_recognised(line: str) -> None:
    assert network_failure("collecting ...\n", f"{line}\nmore\n") == line[:160]


@pytest.mark.parametrize("text", ["FAILED test_state.py::test_hello - AssertionError", "reward = 0.0",
                                  "cat: /app/hello.txt: No such file or directory", ""])
def test_other_failures_are_not(text: str) -> None:
    assert network_failure(text) is None
