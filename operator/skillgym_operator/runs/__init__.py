"""SandboxRuns without per-run bookkeeping objects: reconciled from the watch streams and this
process's own writes, with one status write per change and no finalizer or handler records."""
