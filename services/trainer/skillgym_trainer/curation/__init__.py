"""Curation: from verified trajectories in the store to a versioned, documented dataset."""
