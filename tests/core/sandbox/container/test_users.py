"""Which image user a task's runs take, from Harbor's ``[agent] user`` and ``[verifier] user``."""

from __future__ import annotations

import pytest
from skillgym_core.contracts.task import TaskConfig
from skillgym_core.sandbox.container.users import remap_dockerfile, run_as

BASE = 'schema_version = "1.2"\n[task]\nname = "t/users"\n'


def _config(extra: str) -> TaskConfig:
    return TaskConfig.from_toml(BASE + extra, origin="task.toml", folder="users")


def test_the_agent_user_is_taken_and_a_task_naming_none_keeps_the_sandbox_user() -> None:
    assert run_as(_config('[agent]\nuser = "agent"\n')).user == "agent"
    assert run_as(_config('[agent]\nuser = 1000\n')).user == "1000"
    assert run_as(_config("")).user is None and run_as(_config("")).warnings == ()


def test_the_verifier_user_serves_when_the_agent_names_none_and_a_second_user_is_warned_of() -> None:
    assert run_as(_config('[verifier]\nuser = "tester"\n')).user == "tester"
    both = run_as(_config('[agent]\nuser = "agent"\n[verifier]\nuser = "tester"\n'))
    assert both.user == "agent" and both.warnings == ("the task names the users agent and tester: every run is agent",)
    steps = run_as(_config('[[steps]]\nname = "one"\n[steps.agent]\nuser = "builder"\n'))
    assert steps.user == "builder"


@pytest.mark.parametrize("root", ['"root"', "0", '"0"'])
def test_root_is_never_honoured(root: str) -> None:
    identity = run_as(_config(f"[agent]\nuser = {root}\n"))
    assert identity.user is None and "unprivileged" in identity.warnings[0]


@pytest.mark.parametrize("name", ['"a b"', '"x;rm -rf /"', '"../etc"', '"$(id)"', '"-u"'])
def test_a_name_that_is_no_user_name_is_refused_before_any_shell_sees_it(name: str) -> None:
    with pytest.raises(ValueError, match="is not a user name"):
        run_as(_config(f"[agent]\nuser = {name}\n"))


def test_the_extra_layer_runs_the_remap_as_root_over_the_task_image() -> None:
    lines = remap_dockerfile("localhost/skillgym-task:abc", "agent", 2_000_000).splitlines()
    assert lines[:2] == ["FROM localhost/skillgym-task:abc", "USER root"]
    assert lines[-1].startswith("RUN sh /tmp/skillgym-remap-user.sh agent 2000000 ")
