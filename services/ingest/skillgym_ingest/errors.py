"""Typed ingestion errors. Each is recorded on the skill it concerns; a batch never stops for one."""

from __future__ import annotations

from skillgym_core.errors import SkillGymError


class IngestError(SkillGymError):
    reason = "ingest_error"


class SourceError(IngestError):
    """A source could not be opened at all (missing path, unknown kind, unreadable store prefix)."""

    reason = "source_unreadable"


class ArchiveError(IngestError):
    """An archive was refused or could not be read. ``reason`` names the guard that fired."""

    reason = "archive_invalid"


class ArchiveTraversalError(ArchiveError):
    reason = "archive_path_traversal"


class ArchiveLinkError(ArchiveError):
    reason = "archive_link"


class ArchiveTooLargeError(ArchiveError):
    reason = "archive_too_large"


class ArchiveTooManyFilesError(ArchiveError):
    reason = "archive_too_many_files"


class ArchiveBombError(ArchiveError):
    reason = "archive_bomb"


class ArchiveEncryptedError(ArchiveError):
    reason = "archive_encrypted"


class ArchiveCorruptError(ArchiveError):
    reason = "archive_corrupt"


class SkillReadError(IngestError):
    """A skill folder exists but could not be read within the caps."""

    reason = "skill_unreadable"


class LLMAnnotatorError(IngestError):
    reason = "llm_annotator"


class LabelsError(IngestError):
    """A hand-labelled corpus file is missing, malformed or does not match the corpus it labels."""

    reason = "labels_invalid"
