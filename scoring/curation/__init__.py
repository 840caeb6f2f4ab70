"""Curation: what to train on, and how healthy the environment is. The grading side.

- `metrics`: serving metrics from transcripts (calls, errors by kind, latency percentiles);
- `curate`: pass rates, always/never-solved tasks, difficulty buckets, a seeded mixture;
- `health`: environment health per domain (error, timeout, fault, infra-failure rates), HTML.

Import the submodules.
"""
