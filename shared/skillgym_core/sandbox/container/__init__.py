"""The container sandbox backend: images built from task Dockerfiles, runs in fresh containers."""
