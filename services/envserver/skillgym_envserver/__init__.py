"""The environment server: every validated task an RL environment an RL trainer can roll out
against over HTTP (``skillgym serve-env``). Episodes run in their own sandboxed workspaces; the
task's trusted verifier gives the reward; every finished episode is kept as an ATIF trajectory
with its verification record and published on ``trajectory-verified``."""
