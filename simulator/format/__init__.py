"""Stage 1, the authored format: a domain folder as models, its loading, checks and migration.

`spec` (tables, tools) and `operations` (the steps of a tool) are the models of domain.yaml;
`loader` reads a folder (`_loadspec`, `_loadtools`, `_loadtasks`, `_seedrows`) into a `Domain`;
`lint` and `migrate` check and rewrite it. The pipeline: docs/architecture.md.
"""
