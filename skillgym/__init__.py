"""The ``skillgym`` command line and the embedded runner: the one place that imports every service."""
