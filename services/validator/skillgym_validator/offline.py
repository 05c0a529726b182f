"""Telling a run that failed because it reached for the network from one that failed on its
merits. Runs have no network unless their task asks for it, so a verifier that installs its
tools at run time (Harbor tasks often fetch an installer with curl or ``uv`` in ``test.sh``)
fails every time: that is ``verifier_needs_network``, not a wrong reference solution."""

from __future__ import annotations

import re

# what the usual clients print when a name does not resolve or a connection cannot be made
NETWORK_FAILURES = re.compile(
    r"Could not resolve host|Could not resolve '[^']+'|Temporary failure (?:in name resolution|resolving)"
    r"|Name or service not known|nodename nor servname|Network is unreachable|No route to host"
    r"|unable to resolve host address|Failed to establish a new connection|NewConnectionError"
    r"|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|\bEAI_AGAIN\b|dns error|Failed to connect to \S+ port \d+"
    r"|Failed to fetch https?://|Could not connect to \S+:\d+|error sending request for url",
    re.IGNORECASE,
)
MAX_SHOWN = 160


def network_failure(*outputs: str) -> str | None:
    """The first line of ``outputs`` that says the run could not reach the network, else None."""
    for output in outputs:
        for line in output.splitlines():
            if NETWORK_FAILURES.search(line):
                return line.strip()[:MAX_SHOWN]
    return None
