"""devops: a web service behind nginx with planted faults (upstream port, syntax error,
permissions, port conflict); the agent fixes the configuration, which must parse with a real
nginx parser and route correctly, and classifies each cause.

When the skill runs nginx itself (needs it, or has ``nginx -t`` run before a reload), the task
installs nginx: the reference solution finds and confirms its fixes with the real ``nginx -t``,
and the verifier requires nginx's own syntax test to pass, which also catches values a parser
alone accepts."""

from __future__ import annotations

import json
import random

from skillgym_builder.families import knobs as knob_rules
from skillgym_builder.families import skillfacts
from skillgym_builder.families.base import Fit, SkillClaim, load_family_spec
from skillgym_builder.families.common import (
    agent_solution,
    requirements,
    rubric,
    skill_reader,
    source,
    verifier_files,
)
from skillgym_builder.families.evidence import SkillEvidence, assess
from skillgym_builder.families.service_assets import (
    DEFAULT_CLASSES,
    KIND_KEYWORDS,
    STATUS_CONF,
    Service,
    choose_faults,
    configuration,
    digest,
    healthy_site,
    healthy_unit,
    logs,
    make_service,
    nginx_directives,
    unit_settings,
)
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "service-triage"
NGINX_PACKAGE = "nginx"
# an unprivileged nginx -t fails after the syntax test, on the pid file, temp paths and port 80;
# "syntax is ok" is nginx's verdict on the configuration itself
NGINX_TEST = "nginx -t -e stderr -c /app/etc/nginx/nginx.conf"


def classes_for(vocabulary: list[str], kinds: list[str]) -> dict[str, str] | None:
    """Each planted kind's class in ``vocabulary``, or None when one has no single match."""
    mapping = {}
    for kind in kinds:
        for keyword in KIND_KEYWORDS[kind]:
            matches = [term for term in vocabulary if keyword in term.lower()]
            if len(matches) == 1:
                mapping[kind] = matches[0]
                break
        else:
            return None
    return mapping if len(set(mapping.values())) == len(mapping) else None


def fixed_files(kind: str) -> list[str]:
    """Which of the service's files (``site``, ``env``, ``unit``) a correct fix of ``kind`` may
    change (the report must name one of them)."""
    return {"upstream_port": ["site", "env"], "port_conflict": ["env", "site"], "syntax": ["site"],
            "permission": ["unit"]}[kind]


class ServiceTriageFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        faults = choose_faults(rng, int(values["multi_step"]), bool(values["error_recovery"]))
        service = make_service(rng, faults)
        vocabulary = skillfacts.vocabulary(card)
        classes = classes_for(list(vocabulary.value), faults) if vocabulary and isinstance(vocabulary.value, list) else None
        claim = SkillClaim(
            claimed=classes is not None,
            reason="the failure classes the report must use are defined only by the skill" if classes else
            "the skill defines no failure classes covering these faults; the instruction lists them",
            facts={"failure_classes": vocabulary.source()} if classes and vocabulary else {},
        )
        if classes is None:
            classes = classes_for(DEFAULT_CLASSES, faults)
        assert classes is not None
        workspace = {path: text.encode() for path, text in configuration(service).items()}
        workspace.update({path: text.encode() for path, text in
                          logs(service, rng, int(values["record_count"]), float(values["noise_level"])).items()})
        if values["distractor_files"]:
            workspace["etc/nginx/sites-enabled/status.conf"] = STATUS_CONF.encode()
            workspace[f"etc/nginx/sites-available/{service.app}.conf.bak"] = healthy_site(service).replace(
                "listen 80;", "listen 8000;").encode()
        protected = sorted(p for p in workspace if p.startswith(("logs/", "var/")) or p == "etc/nginx/nginx.conf")
        healthy_env = {"APP_NAME": service.app, "BIND": "0.0.0.0", "UPLOAD_DIR": f"/var/lib/{service.app}/uploads",
                       "LOG_LEVEL": "info", "WORKERS": str(service.workers)}
        expected = {
            "app": service.app, "owner": service.owner,
            # in order: a minimal fix keeps every other line where it was
            "site_directives": [digest(d) for d in nginx_directives(healthy_site(service))],
            "unit_settings": [digest(s) for s in unit_settings(healthy_unit(service))],
            "env_settings": [digest([k, v]) for k, v in healthy_env.items()],
            "faults": [{"kind": k, "cause": digest(classes[k].casefold()), "files": fixed_files(k)} for k in faults],
        }
        items = rubric(self.spec, ["configuration", "diagnosis"])
        task = {"app": service.app, "domain": service.domain, "classes": None if claim.claimed else DEFAULT_CLASSES}
        inspect = ["ls -R etc logs var", "cat logs/nginx-t.txt", f"grep -n 'Listening at\\|Errno' logs/journal-{service.app}.txt || true"]
        argument = json.dumps(task)
        run = f"python3 /tmp/work/triage.py '{argument}'"
        uses_nginx = SkillEvidence.of(card).runs("nginx")
        if uses_nginx:
            expected["nginx_conf"] = configuration(service)["etc/nginx/nginx.conf"]
            inspect.append(f"{NGINX_TEST} > /tmp/nginx-t-before.txt 2>&1 || true")
            run = "\n".join([f"{run} --nginx-t /tmp/nginx-t-before.txt",
                             f"{NGINX_TEST} > /tmp/nginx-t-after.txt 2>&1 || true",
                             "cat /tmp/nginx-t-after.txt", "grep -q 'syntax is ok' /tmp/nginx-t-after.txt"])
        solve = agent_solution(card, inspect=inspect, helpers=skill_reader(), script=source(FAMILY_ID, "solve_triage.py"),
                               name="triage.py", run=run)
        alternative = agent_solution(card, inspect=["cat logs/nginx-t.txt"], helpers=skill_reader(),
                                     script=source(FAMILY_ID, "solve_triage.py"), name="triage.py",
                                     run=f"python3 /tmp/work/triage.py '{argument}' --move-app")
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, service, claim.claimed, bool(values["distractor_files"]), uses_nginx),
            workspace=workspace,
            protected=protected,
            tests=verifier_files(self.spec, expected, items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"move-the-app-port": alternative},
            blueprint=self.spec.blueprint,
            params={"app": service.app, "faults": len(faults), "log_lines": int(values["record_count"])},
            requirements=reqs,
            system_packages=[NGINX_PACKAGE] if uses_nginx else [],
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items], "planted_faults": faults},
        )


def _instruction(card: SkillCard, service: Service, claimed: bool, decoys: bool, nginx: bool) -> str:
    classes = (
        f"the failure class the triage workflow of the `{card.name}` skill in your skills directory assigns it "
        "(its exact wording)"
        if claimed else "one of: " + ", ".join(f"`{c}`" for c in DEFAULT_CLASSES)
    )
    backup = " Only `sites-enabled/` is live." if decoys else ""
    installed = " nginx is installed here too; you are not root." if nginx else ""
    return f"""# Bring `{service.domain}` back

Users get errors from `https://{service.domain}/` (the `{service.app}` app behind nginx). This host's
configuration is mirrored under `/app/etc` (for `/etc`), with recent logs under `/app/logs` and state
listings under `/app/var`.{backup}{installed} The app's configuration is `/app/{service.site}` (its nginx site),
`/app/{service.env}` (its environment) and `/app/{service.unit}` (its systemd unit).

1. Fix that configuration so the app starts, nginx accepts its configuration and proxies
   `{service.domain}` to the port the app listens on. Keep every other setting as it is and where it is; do not touch the
   logs, the listings or `/app/etc/nginx/nginx.conf`.
2. Write `/app/out/triage.json` as `{{"findings": [{{"cause": ..., "file": ...}}]}}`: one finding per distinct
   problem you fixed, `file` being the configuration file you changed for it (path relative to `/app`) and
   `cause` {classes}.
"""
