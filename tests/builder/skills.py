"""Fixture skills put into a store the way ingestion leaves them: a record plus a folder archive."""

from __future__ import annotations

import shutil
from pathlib import Path

from skillgym_core import keys
from skillgym_core.archive import pack_dir
from skillgym_core.contracts.events import SkillIngested
from skillgym_core.contracts.skill import Annotation, SkillFile, SkillRecord
from skillgym_core.ids import content_id, hash_tree, sha256_hex
from skillgym_core.store.base import Store, put_json

FIXTURES = Path(__file__).parent / "fixtures" / "skills"


def put_skill(
    store: Store, folder: Path, *, subcategory: str | None = None, category: str | None = None,
    runtime: dict[str, object] | None = None,
) -> SkillIngested:
    """Store ``folder`` as an accepted skill (with the classification and runtime findings given)
    and return the event ingestion would publish."""
    content_hash = hash_tree(folder)
    skill_id = content_id("skill", content_hash)
    text = (folder / "SKILL.md").read_text()
    body = text.split("---", 2)[2] if text.startswith("---") else text
    record = SkillRecord(
        skill_id=skill_id,
        name=folder.name,
        description=f"fixture skill {folder.name}",
        source=str(folder),
        content_hash=content_hash,
        front_matter={"name": folder.name},
        body=body,
        files=[
            SkillFile(path=p.relative_to(folder).as_posix(), size=p.stat().st_size, sha256=sha256_hex(p.read_bytes()))
            for p in sorted(folder.rglob("*"))
            if p.is_file()
        ],
        category=category,
        subcategory=subcategory,
        runtime={key: Annotation(value=value) for key, value in (runtime or {}).items()},
        accepted=True,
    )
    put_json(store, keys.skill_record(skill_id), record.model_dump(mode="json"))
    store.put_bytes(keys.skill_files(skill_id), pack_dir(folder), "application/gzip")
    return SkillIngested(
        skill_id=skill_id,
        name=record.name,
        record_key=keys.skill_record(skill_id),
        files_key=keys.skill_files(skill_id),
        category=subcategory,
    )


def copy_fixture(name: str, dest: Path) -> Path:
    target = dest / name
    shutil.copytree(FIXTURES / name, target)
    return target


def make_context(tmp: Path):  # -> ServiceContext
    from skillgym_core.context import ServiceContext
    from skillgym_core.sandbox.local import LocalSandbox
    from skillgym_core.store.local import LocalStore

    return ServiceContext(store=LocalStore(tmp / "store"), sandbox=LocalSandbox(), scratch=tmp / "scratch")


def wrap(payload):  # -> Envelope
    from skillgym_core.contracts.events import Envelope

    return Envelope.wrap(payload, producer="test", correlation_id="test-run")
