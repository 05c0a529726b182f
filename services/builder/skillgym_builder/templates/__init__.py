"""The template library, keyed by id; :func:`registry` lists them all."""

from skillgym_builder.templates.registry import TemplateRegistry, registry

__all__ = ["TemplateRegistry", "registry"]
