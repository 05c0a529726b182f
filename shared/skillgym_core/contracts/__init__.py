"""Versioned pydantic contracts shared by every service."""
