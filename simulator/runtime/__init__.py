"""Stage 4, the runtime: a loaded `Domain` and its episodes, one SQLite database per rollout.

`domain` holds the compiled tools and seed; `episode` runs calls under `budget`'s limits on a
connection from `_pool`, with the simulated `clock`; `transcript` is the record a server writes.
The pipeline: docs/architecture.md.
"""
