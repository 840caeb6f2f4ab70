"""What every model of the domain format shares: frozen, strict models, and the expression type."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, WithJsonSchema


class SpecModel(BaseModel):
    """A model of the domain format: unknown keys are errors, values are frozen."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


#: An expression: a literal, a `$reference`, a list of expressions, or a one-key operator mapping.
#: Parsed by `simulator.lang`; its JSON Schema (`$defs/Expr`) is generated from the operator registry:
#: the marker below is `simulator.lang.docs.EXPR_SCHEMA`, swapped for the reference by `toolgym.schemas`.
Expr = Annotated[Any, WithJsonSchema({"x-toolgym-expression": True})]
