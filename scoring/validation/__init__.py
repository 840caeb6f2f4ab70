"""Validation: is a task fit to train on? The grading side; the runtime never imports it.

Submodules: `gold` (the gold replay), `validate` (per-task checks), `domains` (many domains and
their report), `fuzz`, `mutate`, `orders`, `reach`, `sandbox` and `manifest`. Import the
submodules: this package imports nothing, so that `scoring.replay` can use `gold`.
Design notes: docs/design/scoring.md.
"""

#: calls per tool that `fuzz` makes unless told otherwise
DEFAULT_CALLS = 50
