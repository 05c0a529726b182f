"""The LLM builder: an agent that writes a Harbor task in a sandboxed draft workspace."""
