"""Root conftest: makes the repository root importable for ``tests.support``."""
