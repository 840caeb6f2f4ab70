"""Generated Python functions: the one place their source is compiled and run.

Several parts write small functions out as Python source (fused arithmetic, list and object
displays, row decoders and builders, encoders, argument checks, step bodies): the same shapes recur
across the tools and domains of a process, so each text is compiled once (`define`) and run in a
namespace holding the values its names stand for. Generated source holds only generated names,
indices and `repr` literals: no name or value of a spec is ever evaluated as code.
"""

from __future__ import annotations

from functools import lru_cache
from types import CodeType
from typing import Any


@lru_cache(maxsize=4096)
def _code(source: str, filename: str) -> CodeType:
    return compile(source, filename, "exec")


def define(source: str, filename: str, namespace: dict[str, Any], name: str) -> Any:
    """Run `source` (compiled once per text) in `namespace`; the object it defines as `name`."""
    exec(_code(source, filename), namespace)  # noqa: S102
    return namespace[name]
