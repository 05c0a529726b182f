"""devops/configuration: layered JSON configuration (defaults, environment, local overrides)
with nested merges, replaced lists, overridden scalars and, when the skill's rules say so, null
deletions; the agent resolves the effective configuration and where each value comes from."""

from __future__ import annotations

import copy
import hashlib
import json
import random
from typing import Any

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
from skillgym_builder.skillcard import SkillCard
from skillgym_builder.templates.base import TemplateOutput

FAMILY_ID = "layered-config"
DEFAULT_ORDER = ["defaults.json", "production.json", "region.json", "host.json", "local.json"]
SERVICES = ["checkout", "catalog", "notifier", "ingest", "reports"]
HOSTS = ["db.internal", "db-eu.internal", "10.0.3.12", "pg-primary.svc"]


def _section(rng: random.Random, name: str) -> dict[str, Any]:
    return {
        "enabled": rng.random() < 0.8,
        "host": rng.choice(HOSTS),
        "port": rng.choice([5432, 6379, 8080, 9000, 9200]),
        "timeouts": {"connect_s": rng.randint(1, 10), "read_s": rng.randint(5, 60)},
        "pool": {"min": rng.randint(1, 4), "max": rng.randint(8, 32)},
        "tags": rng.sample(["blue", "green", "canary", "eu", "us", "batch", "realtime"], rng.randint(1, 3)),
        "mode": rng.choice(["strict", "lenient", "audit"]),
        "label": f"{name}-{rng.randint(1, 99)}",
    }


SECTION_NAMES = ["server", "database", "cache", "queue", "search", "storage", "email", "metrics", "tracing",
                 "auth", "payments", "scheduler", "gateway", "uploads", "webhooks", "billing"]


def canonical_digest(value: Any) -> str:
    """How the verifier holds the expected result: a digest of its canonical JSON."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def leaves(config: dict[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key, value in config.items():
        path = f"{prefix}.{key}" if prefix else key
        out += leaves(value, path) if isinstance(value, dict) and value else [path]
    return out


def _get(config: dict[str, Any], path: str) -> Any:
    for key in path.split("."):
        config = config[key]
    return config


def _set(layer: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        layer = layer.setdefault(key, {})
    layer[last] = value


def _changed(rng: random.Random, value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + rng.randint(1, 50)
    if isinstance(value, list):
        return rng.sample(["blue", "green", "canary", "eu", "us", "batch", "realtime", "ap"], rng.randint(0, 3))
    return f"{value}-override" if rng.random() < 0.5 else rng.choice(HOSTS)


def overrides(rng: random.Random, base: dict[str, Any], per_layer: int, nulls: bool) -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for path in rng.sample(leaves(base), min(per_layer, len(leaves(base)))):
        _set(layer, path, _changed(rng, _get(base, path)))
    section = rng.choice(sorted(base))
    _set(layer, f"{section}.extra_{rng.randint(1, 9)}", rng.choice(["on", "off", 3, ["x", "y"]]))
    if nulls:
        victim = rng.choice([p for p in leaves(base) if p.split(".")[0] != section] or leaves(base))
        _set(layer, victim, None)
    return layer


def merge(base: dict[str, Any], layer: dict[str, Any], name: str, source: dict[str, str], nulls: bool,
          prefix: str = "") -> None:
    """Objects merge key by key; everything else is replaced; with ``nulls`` a null deletes."""
    for key, value in layer.items():
        path = f"{prefix}.{key}" if prefix else key
        if value is None and nulls:
            base.pop(key, None)
            for stale in [p for p in source if p == path or p.startswith(path + ".")]:
                del source[stale]
        elif isinstance(value, dict) and isinstance(base.get(key), dict):
            merge(base[key], value, name, source, nulls, path)
        else:
            base[key] = copy.deepcopy(value)
            for stale in [p for p in source if p == path or p.startswith(path + ".")]:
                del source[stale]
            for leaf in leaves(value, path) if isinstance(value, dict) else [path]:
                source[leaf] = name


class LayeredConfigFamily:
    def __init__(self) -> None:
        self.spec = load_family_spec(FAMILY_ID)

    def suitability(self, card: SkillCard) -> Fit:
        return assess(self.spec, SkillEvidence.of(card))

    def instantiate(self, card: SkillCard, seed: int, knobs: dict[str, float]) -> TemplateOutput:
        values = knob_rules.validate(self.spec, knobs)
        rng = random.Random(f"{FAMILY_ID}:{card.record.skill_id}:{seed}")
        order_fact, null_fact = skillfacts.layer_order(card), skillfacts.null_deletes(card)
        skill_order = list(order_fact.value) if order_fact and isinstance(order_fact.value, list) else None
        order = skill_order or [*DEFAULT_ORDER[: int(values["multi_step"])], "local.json"]
        per_layer = 3 * (int(values["multi_step"]) if skill_order else 1)
        nulls = null_fact is not None
        facts = {k: f.source() for k, f in (("layer_order", order_fact), ("null_rule", null_fact)) if f is not None}
        claim = SkillClaim(claimed=bool(facts), facts=facts,
                           reason="which layers apply, in which order, and what a null means come from the skill"
                           if facts else "the skill fixes neither the layers nor the meaning of null; the instruction does")
        services = rng.sample(SERVICES, int(values["long_horizon"]))
        workspace: dict[str, bytes] = {}
        broken: list[str] = []
        effective, provenance, queries = {}, {}, {}
        for service in services:
            defaults = {name: _section(rng, name) for name in rng.sample(SECTION_NAMES, int(values["record_count"]))}
            layers = [defaults] + [overrides(rng, defaults, per_layer, nulls) for _ in order[1:]]
            result: dict[str, Any] = {}
            origin: dict[str, str] = {}
            for name, layer in zip(order, layers, strict=True):
                merge(result, layer, name, origin, nulls)
                workspace[f"services/{service}/config/{name}"] = (json.dumps(layer, indent=2) + "\n").encode()
            if values["error_recovery"] and len(order) > 1:
                path = f"services/{service}/config/{order[-1]}"
                text = workspace[path].decode()
                workspace[path] = (text[: text.rindex("}")].rstrip() + ",\n}\n").encode()
                broken.append(path)
            if values["distractor_files"]:
                stale = overrides(rng, defaults, per_layer, False)
                workspace[f"services/{service}/config/staging.json"] = (json.dumps(stale, indent=2) + "\n").encode()
                workspace[f"services/{service}/config/{order[-1]}.example"] = b'{\n  "server": {"port": 0}\n}\n'
            effective[service] = result
            chosen = sorted(rng.sample(sorted(origin), min(6, len(origin))))
            queries[service] = chosen
            provenance[service] = {key: origin[key] for key in chosen}
        protected = sorted(p for p in workspace if p not in broken)
        items = rubric(self.spec, ["effective", "provenance"])
        task = {"services": services, "queries": queries, "order": order, "order_from_skill": skill_order is not None,
                "null_rule_from_skill": nulls}
        argument = json.dumps(task)
        solve = agent_solution(card, inspect=["ls -R services"], helpers=skill_reader(), script=source(FAMILY_ID, "solve_merge.py"),
                               name="merge.py", run=f"python3 /tmp/work/merge.py '{argument}'")
        alternative = agent_solution(card, inspect=["ls services"], helpers=skill_reader(), script=source(FAMILY_ID, "solve_flat.py"),
                                     name="merge.py", run=f"python3 /tmp/work/merge.py '{argument}'")
        reqs, skipped = requirements(self.spec, card)
        return TemplateOutput(
            instruction=_instruction(card, services, queries, None if skill_order else order, nulls),
            workspace=workspace,
            protected=protected,
            tests=verifier_files(self.spec, {"effective": {k: canonical_digest(v) for k, v in effective.items()},
                                             "provenance": {k: canonical_digest(v) for k, v in provenance.items()}},
                                 items),
            solution_steps=[],
            solve_script=solve,
            alternative_scripts={"flattened-paths": alternative},
            blueprint=self.spec.blueprint,
            params={"services": len(services), "layers": len(order), "sections": int(values["record_count"])},
            requirements=reqs,
            equivalences={k: list(v) for k, v in self.spec.equivalences.items()},
            metadata={"skill_claim": claim.model_dump(), "skill_dependencies_skipped": skipped,
                      "rubric": [i.model_dump() for i in items]},
        )


def _instruction(card: SkillCard, services: list[str], queries: dict[str, list[str]], order: list[str] | None,
                 nulls: bool) -> str:
    if order is None:
        rules = (f"Apply the layers the way the `{card.name}` skill in your skills directory prescribes: which files "
                 "apply, in which order" + (", and what a `null` value means." if nulls else "."))
    else:
        rules = ("Layers apply in this order, later ones winning: " + ", ".join(f"`{n}`" for n in order) + "."
                 + (f" What a `null` value means is set by the `{card.name}` skill in your skills directory." if nulls
                    else ""))
    asked = "\n".join(f"- `{service}`: " + ", ".join(f"`{key}`" for key in keys) for service, keys in queries.items())
    dirs = ", ".join(f"`/app/services/{s}/config/`" for s in services)
    return f"""# Resolve the effective configuration

The deploy tool builds each service's configuration from the JSON layers in {dirs}. Support needs to know
what the service really runs with.

{rules} Objects merge key by key at every depth; lists and all other values replace what an earlier layer set.

Write `/app/out/effective.json` as `{{"<service>": <its effective configuration>}}`, and
`/app/out/provenance.json` as `{{"<service>": {{"<dotted key>": "<file name of the layer that sets its effective
value>"}}}}` for these keys:

{asked}

Do not modify the layer files, except to repair one that does not parse.
"""
