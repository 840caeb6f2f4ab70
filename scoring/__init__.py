"""Scoring: transcripts, replay, state diff, rewards, validation, curation."""
