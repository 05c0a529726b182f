"""The skill taxonomy (data in ``taxonomy.json``; replaceable via ``IngestSettings.taxonomy_path``)."""

from skillgym_ingest.taxonomy.classify import Classification, KeywordClassifier, Taxonomy, load_taxonomy

__all__ = ["Classification", "KeywordClassifier", "Taxonomy", "load_taxonomy"]
