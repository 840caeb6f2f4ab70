"""Stage 2, the compiled plan: a tool's steps made runnable statements over the domain's tables.

`compiler` compiles an operation (the compile state and registry in `_compilation`) into the
runnable steps of `runsteps`, `readsteps` and `writesteps`, which read through `_query` and
write `tables` with keys from `ids`. The pipeline: docs/architecture.md.
"""
