"""Task environments: declared Python requirements, the Dockerfile rules that keep the image
consistent with them, and cached local virtual environments mounted into the sandbox."""

from skillgym_core.envbuild.dockerfile import DEFAULT_SKILL_DIRS, LintFinding, lint_dockerfile, lint_environment
from skillgym_core.envbuild.factory import environment_provider
from skillgym_core.envbuild.provider import (
    ENV_MOUNT,
    EnvironmentBuildError,
    EnvironmentProvider,
    PreparedEnvironment,
)
from skillgym_core.envbuild.requirements import (
    REQUIREMENTS_FILE,
    Requirements,
    RequirementsError,
    declared_requirements,
    parse_requirements,
)
from skillgym_core.envbuild.venv import LocalVenvProvider, PipSource

__all__ = [
    "DEFAULT_SKILL_DIRS",
    "ENV_MOUNT",
    "REQUIREMENTS_FILE",
    "EnvironmentBuildError",
    "EnvironmentProvider",
    "LintFinding",
    "LocalVenvProvider",
    "PipSource",
    "PreparedEnvironment",
    "Requirements",
    "RequirementsError",
    "declared_requirements",
    "environment_provider",
    "lint_dockerfile",
    "lint_environment",
    "parse_requirements",
]
