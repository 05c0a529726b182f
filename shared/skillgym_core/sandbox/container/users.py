"""Harbor's ``[agent] user`` (and ``[verifier] user``) on the container sandbox.

A rootful engine runs a container's uid as the same uid on the host, so running an agent as the
image's own user (uid 1000, say) would hand it a real host identity. Instead the image gets one
more layer that gives the task's user the sandbox's dedicated uid: its ``/etc/passwd`` entry, its
private group and every file it owns in the image move to that uid. Runs keep going as the
sandbox uid (with no supplementary groups) and are, to the task, that user: its name, its home,
its files. Root is never honoured: such a task runs as the unprivileged sandbox user and a
warning says so."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from skillgym_core.contracts.task import TaskConfig

ROOT_NAMES = frozenset({"root", "0"})
# what useradd and Harbor images use; anything else (quotes, slashes, spaces) never reaches a shell
_USER_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")

# Runs as root in the build of the extra layer; $1 the user (a name, or a uid), $2 the sandbox uid.
REMAP_SCRIPT = r"""set -eu
want="$1"; new="$2"
case "$want" in
  *[!0-9]*) field=1 ;;
  *) field=3 ;;
esac
line=$(awk -F: -v f="$field" -v w="$want" '$f == w { print; exit }' /etc/passwd)
if [ -z "$line" ]; then
  if [ "$field" = 1 ]; then echo "the task's user $want is not in the image's /etc/passwd" >&2; exit 3; fi
  find / -xdev -uid "$want" -exec chown -h "$new" {} +
  exit 0
fi
name=$(echo "$line" | cut -d: -f1); old_uid=$(echo "$line" | cut -d: -f3); old_gid=$(echo "$line" | cut -d: -f4)
if [ "$old_uid" = 0 ]; then echo "the task's user $want is root in the image" >&2; exit 4; fi
rewrite() { awk -F: -v OFS=: "$1" "$2" > /tmp/skillgym-rewrite && cat /tmp/skillgym-rewrite > "$2" && rm -f /tmp/skillgym-rewrite; }
# the user's lines go first, so a lookup by id finds them before an entry the image already has
# with that id (nobody's 65534, say)
others='{ rest[++k] = $0 } END { for (i = 1; i <= k; i++) print rest[i] }'
rewrite "\$1 == \"$name\" { \$3 = $new; \$4 = $new; print; next } $others" /etc/passwd
find / -xdev -uid "$old_uid" -exec chown -h "$new" {} +
if [ "$old_gid" != 0 ]; then
  find / -xdev -gid "$old_gid" -exec chgrp -h "$new" {} +
  rewrite "\$3 == $old_gid { \$3 = $new; print; next } $others" /etc/group
elif ! awk -F: -v n="$name" '$1 == n { found = 1 } END { exit !found }' /etc/group; then
  rewrite "BEGIN { print \"$name:x:$new:\" } { print }" /etc/group
fi
"""


@dataclass(frozen=True)
class RunAs:
    """The image user a task's runs are to be (None: the sandbox user as it is), and why a user
    the task named is not."""

    user: str | None
    warnings: tuple[str, ...] = field(default_factory=tuple)


def _named(values: Iterable[str | int | None]) -> list[str]:
    return [str(value).strip() for value in values if value is not None and str(value).strip()]


def run_as(config: TaskConfig) -> RunAs:
    """The user the task's runs take: the agent's (the task's, then its steps'), else the
    verifier's. One identity serves every phase, since every run is the same sandbox uid."""
    agent = _named([config.agent.user, *(step.agent.user for step in config.steps)])
    verifier = _named([config.verifier.user, *(step.verifier.user for step in config.steps)])
    warnings: list[str] = []
    for name in dict.fromkeys(n for n in agent + verifier if n in ROOT_NAMES):
        warnings.append(f"the task asks to run as {name}: runs go as the sandbox's unprivileged user instead")
    candidates = [n for n in agent + verifier if n not in ROOT_NAMES]
    for name in candidates:
        if not name.isdigit() and not _USER_NAME.match(name):
            raise ValueError(f"user {name!r} is not a user name")
    if not candidates:
        return RunAs(None, tuple(warnings))
    chosen = candidates[0]
    for other in dict.fromkeys(candidates[1:]):
        if other != chosen:
            warnings.append(f"the task names the users {chosen} and {other}: every run is {chosen}")
    return RunAs(chosen, tuple(warnings))


REMAP_SCRIPT_NAME = "skillgym-remap-user.sh"


def remap_layer(user: str, uid: int) -> str:
    """The Dockerfile lines that give ``user`` the sandbox ``uid`` (the build context holds
    :data:`REMAP_SCRIPT` as :data:`REMAP_SCRIPT_NAME`)."""
    return (f"USER root\nCOPY {REMAP_SCRIPT_NAME} /tmp/{REMAP_SCRIPT_NAME}\n"
            f"RUN sh /tmp/{REMAP_SCRIPT_NAME} {user} {uid} && rm -f /tmp/{REMAP_SCRIPT_NAME}\n")


def remap_dockerfile(base_image: str, user: str, uid: int) -> str:
    """The extra layer over ``base_image`` that gives ``user`` the sandbox ``uid``."""
    return f"FROM {base_image}\n{remap_layer(user, uid)}"
