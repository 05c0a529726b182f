"""Export verified trajectories to the formats SFT stacks read."""

from skillgym_trainer.export.chat import atif_to_chat, content_text, normalise_tool

__all__ = ["atif_to_chat", "content_text", "normalise_tool"]
