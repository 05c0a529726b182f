"""The validator service: the validity gate (nop, oracle, determinism) and the skill-dependence
contrast with a baseline agent, over tasks the reviewer approved."""
