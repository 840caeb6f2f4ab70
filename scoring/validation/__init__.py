"""Validation: is a task fit to train on? The grading side; the runtime never imports it.

- `gold`: the one gold replay (`replay_gold`), through `simulator.calls.run_calls`;
- `validate`: per task, the checks (`broken-gold`, `flaky`, `no-op-passes`, ...) and a domain's report;
- `fuzz`: every tool called with schema-valid arguments; `mutate`: one argument changed at a time;
- `orders`: alternative orders of independent calls (footprints from read tracing, `ReadTrace`);
- `reach`: whether the values a task needs are reachable; `sandbox`: no network while validating;
- `manifest`: the validated tasks of a domain fingerprint (`serve --manifest`, `score --manifest`).

Import the submodules (this package imports nothing, so that `scoring.replay` can use `gold`).
"""

#: calls per tool that `fuzz` makes unless told otherwise
DEFAULT_CALLS = 50
