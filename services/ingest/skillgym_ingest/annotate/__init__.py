"""Rule annotators for the three axes. Each returns ``{key: Annotation}`` with evidence."""
