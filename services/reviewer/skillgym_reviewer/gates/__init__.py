"""Review gates: each takes the checked-out task (and execution evidence) and returns a verdict."""
