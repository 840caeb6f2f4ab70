"""Typed builders: domains emitted from code (the generator's way in), escaped by construction.

    from simulator.builders import (DomainBuilder, F, arg, column, create, get, inputs, ops, param,
                                 ref, require, template)

    d = DomainBuilder("shop", "1.0.0", description="A tiny shop.")
    d.table("customers", "customer_id", {"customer_id": column("string"),
                                         "name": column("string")}, id_prefix="C-")
    d.tool("add_customer", "Add a customer.", "write",
           inputs({"name": param("string", minLength=1)}, required=["name"]),
           [require(ops.ne(arg("name"), "$root"), template("The name ", arg("name"), " is taken.")),
            create("customers", {"name": arg("name")})])
    domain = d.load()

A Python value where an expression goes is a literal (`"$root"` is written `"$$root"`, a dict
becomes `object: {...}`); references (`ref`, `arg`, `row`, `NOW`), operators (`ops.NAME`) and
templates (`template(...)`: text pieces with their braces doubled, refs as holes) are built
explicitly. `DomainBuilder.spec()` gives the validated `DomainSpec`, `write(folder)` the folder
(domain.yaml, seed/*.jsonl, tasks.jsonl), `load()` the loaded `Domain`.
"""

from __future__ import annotations

from .domain import (
    NOW_DEFAULT,
    CallRef,
    DomainBuilder,
    call,
    calls_ref,
    clock,
    column,
    counter_ids,
    dump_jsonl,
    dump_yaml,
    hash_ids,
    inputs,
    param,
    pattern_ids,
    uuid_ids,
)
from .expr import (
    NOW,
    Expr,
    ExprLike,
    Formatted,
    Ref,
    Template,
    arg,
    expr,
    filter_,
    fmt,
    has,
    literal,
    map_,
    obj,
    op,
    ops,
    ref,
    row,
    template,
)
from .steps import (
    F,
    Filter,
    Step,
    count,
    create,
    delete,
    fail,
    for_each,
    get,
    let,
    list_,
    require,
    return_,
    sum_,
    update,
    use,
)

__all__ = [
    "NOW",
    "NOW_DEFAULT",
    "CallRef",
    "DomainBuilder",
    "Expr",
    "ExprLike",
    "F",
    "Filter",
    "Formatted",
    "Ref",
    "Step",
    "Template",
    "arg",
    "call",
    "calls_ref",
    "clock",
    "column",
    "count",
    "counter_ids",
    "create",
    "delete",
    "dump_jsonl",
    "dump_yaml",
    "expr",
    "fail",
    "filter_",
    "fmt",
    "for_each",
    "has",
    "hash_ids",
    "get",
    "inputs",
    "let",
    "list_",
    "literal",
    "map_",
    "obj",
    "op",
    "ops",
    "param",
    "pattern_ids",
    "uuid_ids",
    "ref",
    "require",
    "return_",
    "row",
    "sum_",
    "template",
    "update",
    "use",
]
