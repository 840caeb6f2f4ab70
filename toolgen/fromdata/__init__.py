"""A domain from a tool list and real records (`toolgym generate SPEC --data SNAPSHOT`).

    generate_domain("tools.json", "db.json", "out/shop")   # -> the domain folder

The records are the seed as given (`toolgen.snapshot`); every tool of the list becomes a tool of
one domain, bound to the tables by its argument names. Reads return records in the data's shape;
writes check what their names and descriptions state. What a description says that these rules
cannot express is listed per tool as "not modelled" in README.md and report.json (a `refine`
hook may change the tools first: a model's proposals, `toolgen.proposals`).
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

from ._bound import Bound
from ._domain import FromData, Refine, domain_name, generate_domain, read_operations
from ._records import Records, one_of

__all__ = [
    "Bound",
    "FromData",
    "Records",
    "Refine",
    "domain_name",
    "generate_domain",
    "one_of",
    "read_operations",
]
