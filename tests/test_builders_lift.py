"""Builders and the language agree both ways, and real domains are rebuilt through the builders.

- any builder-made expression, through YAML and the language's parser (`simulator.lang.parse`),
  lifts back to the same builder value; so does any template;
- every bundled and fixture domain, re-expressed through the builders (`lift_domain`), checks with
  no errors or warnings (today's spellings) and replays the gold calls pinned in
  tests/fixtures/golden_replays.json: outcomes, errors, digests.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from scoring import check_domain as check_graded
from simulator.builders import (
    NOW,
    Expr,
    arg,
    dump_yaml,
    expr,
    filter_,
    fmt,
    literal,
    map_,
    obj,
    op,
    ops,
    ref,
    template,
)
from simulator.builders.lift import lift_domain, lift_expr, lift_template

from .conftest import ROOT
from .test_builders import JSON

sys.path.insert(0, str(ROOT / "scripts"))
import golden_replays  # noqa: E402


def _eager_operators() -> list[tuple[str, int]]:
    from simulator.lang import OPERATORS

    return sorted((name, o.arity or 2) for name, o in OPERATORS.items() if o.fn is not None)


def _exprs() -> st.SearchStrategy[Any]:
    """Expressions built with the builders: literals, references, operators, objects, map/filter, templates."""
    leaves = (
        JSON.map(lambda v: Expr(expr(v)))
        | JSON.map(literal)
        | st.sampled_from(["a", "b_1"]).map(lambda n: arg(n))
        | st.just(NOW)
    )

    def grow(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        calls = st.sampled_from(_eager_operators()).flatmap(
            lambda spec: st.lists(inner, min_size=spec[1], max_size=spec[1]).map(
                lambda args: op(spec[0], *args)
            )
        )
        objects = st.dictionaries(st.text(max_size=4), inner, max_size=2).map(obj)
        binders = st.tuples(inner, inner, st.booleans()).map(
            lambda t: (map_ if t[2] else filter_)(t[0], "it", lambda it: ops.coalesce(it.get("k"), t[1]))
        )
        texts = st.lists(st.text(max_size=4) | st.sampled_from([arg("a"), arg("a").fmt(">3")]), max_size=3)
        return calls | objects | binders | texts.map(lambda parts: fmt(template(*parts)))

    return st.recursive(leaves, grow, max_leaves=6)


@given(built=_exprs())
def test_builder_yaml_parse_lift_is_the_identity(built: Any) -> None:
    """What the builders write, through YAML and the language's parser, lifts back to the same builder value."""
    raw = yaml.safe_load(dump_yaml({"e": built.raw}))["e"]
    assert raw == built.raw
    assert lift_expr(raw) == built


@given(text=st.text(), spec=st.sampled_from(["", ">6", ".2f", "^9"]))
def test_lifting_a_template_gives_back_its_text(text: str, spec: str) -> None:
    """template -> text -> the language's parser -> template: the same text (what the builders emit is what they read)."""
    hole = arg("x").fmt(spec) if spec else arg("x")
    written = template(text, hole, text)
    assert lift_template(written.text) == written


# ------------------------------------------------------------------ rebuilding real domains


PINNED_FOLDERS = [
    *golden_replays.DOMAINS,
    *golden_replays.HAND_WRITTEN,
    *(folder for folder, _ in golden_replays.WITH_TASKS),
]


@pytest.mark.parametrize("name", [f.name for f in PINNED_FOLDERS])
def test_a_domain_rebuilt_with_the_builders_replays_its_pinned_gold(name: str, tmp_path: Path) -> None:
    """Every pinned domain, re-expressed through the builders, replays its gold exactly as pinned."""
    (folder,) = [f for f in golden_replays._folders(tmp_path) if f.name == name]
    pinned = json.loads(golden_replays.FIXTURE.read_text(encoding="utf-8"))
    builder = lift_domain(folder)
    # checked with its gold, which the grading side reads (`builder.check()` is the runtime's check)
    report = check_graded(builder.write(tmp_path / "rebuilt" / str(builder.head["name"])))
    assert (report.errors, report.warnings) == ([], [])  # written in today's spellings: nothing to warn about
    domain = report.domain
    assert domain is not None and domain.ref in pinned, name
    assert golden_replays.record_domain(domain) == pinned[domain.ref]
    assert len(builder.tools) == len(
        yaml.safe_load((folder / "domain.yaml").read_text(encoding="utf-8"))["tools"]
    )


def test_lifted_expressions_are_builder_calls() -> None:
    raw = {"if": [{"get": ["$order", "status"]}, {"format": "{order.total:.2f} {{EUR}}"}, "$$5"]}
    lifted = lift_expr(raw)
    assert lifted == ops.if_(
        ops.get_key(ref("order"), "status"), fmt(template(ref("order", "total").fmt(".2f"), " {EUR}")), "$5"
    )
