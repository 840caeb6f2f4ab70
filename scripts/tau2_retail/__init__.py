"""Port tau2-bench's retail domain into a toolgym domain folder, and check that the port agrees.

`build` reads tau2's retail data (db.json, tasks.json, policy.md, tool_schemas.json, split_tasks.json,
expected.jsonl) and writes, deterministically:

  domains/tau2-retail/seed/<table>.jsonl   the nested db.json normalised into tables (tables.py)
  domains/tau2-retail/policy.md            tau2's policy text, verbatim
  domains/tau2-retail/tasks.jsonl          the 114 tasks: gold calls, expect_error, answer facts, notes
                                           (tasks.py)
  domains/tau2-retail/domain.yaml          tables + the tools with tau2's exact names, descriptions and
                                           parameter schemas (tools.py); operations in operations.py
  domains/tau2-retail/README.md            readme.py

It also checks the converter: exporting the seed tables back to tau2's nested shape (export.py) must
give db.json exactly (with the optional order fields tau2's models add as null).

`check_agreement` (agree.py; needs the toolgym core) replays every task's gold calls through toolgym and
compares with tau2's own run (expected.jsonl): (a) each call's success or error, and the error text,
(b) the final state's changed records, exported back to tau2's shape, against `changes`, record by
record, field by field, (c) the outputs of calls that succeed, as data and as text.

Only data from tau2 is read (source.py); no tau2 code is used. The command line is
scripts/port_tau2_retail.py; tests/test_tau2_retail.py imports this package.
"""

from .agree import Agreement, check_agreement
from .domain import build
from .export import export_tau2
from .source import DEFAULT_OUT, DEFAULT_SOURCE, load_expected

__all__ = [
    "DEFAULT_OUT",
    "DEFAULT_SOURCE",
    "Agreement",
    "build",
    "check_agreement",
    "export_tau2",
    "load_expected",
]
