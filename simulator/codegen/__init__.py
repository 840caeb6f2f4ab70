"""Stage 3, generated code: plans and checks turned into Python source once per tool or table.

`emit` builds a step list's function, `encoding` and `decoding` the per-column conversions into
and out of SQLite, `fastschema` a tool's input check. The pipeline: docs/architecture.md.
"""
