"""SkillGym's Kubernetes operator: SandboxRun -> sandboxed pod, TrainingJob -> indexed GPU Job.

Start with ``kopf run -m skillgym_operator``; importing the package registers the handlers."""

from skillgym_operator import handlers as handlers
