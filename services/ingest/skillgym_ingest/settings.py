"""Ingestion settings: every threshold a filter or a guard uses lives here."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict
from skillgym_core.settings import CommonSettings


class IngestSettings(CommonSettings):
    model_config = SettingsConfigDict(env_prefix="SKILLGYM_INGEST_", extra="ignore")

    # Filters (the papers' acceptance rules).
    max_files: int = Field(300, ge=1, description="skills with more files are rejected")
    require_english: bool = True
    english_min_score: float = Field(0.5, ge=0, le=1)
    min_body_chars: int = Field(1, ge=0, description="bodies shorter than this count as empty")
    min_consistency: float = Field(0.05, ge=0, le=1, description="description/body overlap below this rejects")
    reject_network: bool = True
    reject_gpu: bool = True
    reject_destructive: bool = True
    reject_unsafe: bool = True
    reject_spec_errors: bool = False

    # Guards while reading untrusted input.
    max_skill_bytes: int = Field(50 * 1024 * 1024, ge=1)
    max_file_bytes: int = Field(5 * 1024 * 1024, ge=1, description="larger files are listed but not scanned")
    max_scan_bytes: int = Field(512 * 1024, ge=1, description="bytes of each text file the rules read")
    max_walk_files: int = Field(5000, ge=1, description="a skill folder listing stops here")
    archive_max_bytes: int = Field(256 * 1024 * 1024, ge=1)
    archive_max_files: int = Field(20000, ge=1)
    archive_max_ratio: float = Field(100.0, ge=1, description="uncompressed/compressed above this is a bomb")
    archive_max_depth: int = Field(2, ge=0, description="archives inside archives are opened this deep")

    # Dedup.
    dedup: bool = True
    minhash_perms: int = Field(128, ge=16)
    minhash_bands: int = Field(32, ge=1)
    shingle_size: int = Field(3, ge=1)
    near_dup_threshold: float = Field(0.5, gt=0, le=1)
    script_near_dup_threshold: float = Field(
        0.7, gt=0, le=1, description="skills whose scripts are at least this similar are duplicates, whatever SKILL.md says"
    )
    script_shingle_size: int = Field(4, ge=1, description="tokens per shingle of comment-free code")
    script_min_tokens: int = Field(
        150, ge=1, description="scripts with fewer code tokens are too small to identify a skill; they count as its text"
    )
    script_min_file_tokens: int = Field(30, ge=1, description="smaller script files (empty __init__.py, shims) are ignored")
    dedup_dir: Path | None = Field(None, description="where the dedup index files go (unlinked temp files)")
    dedup_table_slots: int = Field(
        1 << 22, ge=8, description="first LSH table size (sparse on disk); it chains a larger one when half full"
    )

    # Taxonomy.
    taxonomy_path: Path | None = None
    classifier: Literal["keywords", "embedding"] = "keywords"
    min_category_confidence: float = Field(0.0, ge=0, le=1)

    # Optional LLM annotator role (any OpenAI-compatible chat endpoint).
    llm_annotate: bool = False
    llm_base_url: str = "http://127.0.0.1:8000/v1"
    llm_api_key: SecretStr = SecretStr("")
    llm_model: str = "annotator"
    llm_timeout_s: float = Field(60.0, gt=0)
    llm_max_tokens: int = Field(400, ge=16)
    llm_max_body_chars: int = Field(6000, ge=200, description="SKILL.md body characters sent to the model")

    # Execution.
    workers: int = Field(0, ge=0, description="processes; 0 means one per CPU, 1 means in-process")
    chunk_size: int = Field(64, ge=1)
    write_store: bool = True
