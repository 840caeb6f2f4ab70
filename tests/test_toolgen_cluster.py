"""cluster(): every operation in one domain or skipped, domains within bounds and connected,
byte-identical plans for the same input and seed, whatever the input order."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.cluster import cluster, tool_names
from toolgen.graph import components, entity_graph, is_connected
from toolgen.model import Kind, Operation, Plan


def op(
    api: str,
    name: str,
    entity: str,
    kind: Kind = "read",
    consumes: tuple[str, ...] = (),
    produces: tuple[str, ...] = (),
    prefix: str | None = None,
) -> Operation:
    return Operation(
        id=f"{api}:{name}",
        source=f"{api}.yaml",
        pointer=f"/paths/~1{name}/get",
        format="openapi-3.0",
        api=api,
        name=name,
        description=f"{kind} {entity}",
        input_schema={"type": "object", "properties": {}},
        entity=entity,
        kind=kind,
        consumes=list(consumes),
        produces=list(produces),
        path_prefix=prefix,
    )


def crud(api: str, entity: str, parent: str | None = None, prefix: str | None = None) -> list[Operation]:
    """Five operations on one entity (list, get, create, update, delete), holding a parent's id."""
    held = (parent,) if parent else ()
    return [
        op(api, f"list_{entity}s", entity, "read", held, (entity,), prefix),
        op(api, f"get_{entity}", entity, "read", (entity, *held), (), prefix),
        op(api, f"create_{entity}", entity, "create", held, (entity,), prefix),
        op(api, f"update_{entity}", entity, "update", (entity,), (), prefix),
        op(api, f"delete_{entity}", entity, "delete", (entity,), (), prefix),
    ]


def by_id(ops: list[Operation]) -> dict[str, Operation]:
    return {o.id: o for o in ops}


def check_invariants(ops: list[Operation], plan: Plan, min_tools: int, max_tools: int) -> None:
    """Each operation once (domain or skipped); every domain in bounds and connected; names unique."""
    placed = [i for d in plan.domains for i in d.operations] + [s.id for s in plan.skipped]
    assert sorted(placed) == sorted(o.id for o in ops)
    assert len(placed) == len(set(placed))
    index = by_id(ops)
    for domain in plan.domains:
        members = [index[i] for i in domain.operations]
        assert min_tools <= len(members) <= max_tools, (domain.name, len(members))
        assert is_connected(members), domain.name
        assert domain.entities == sorted(entity_graph(members).nodes)
        assert domain.apis == sorted({m.api for m in members})
        # every operation has a tool name in its domain, unique there and valid for tool calling
        assert sorted(domain.tools) == sorted(domain.operations)
        assert len(set(domain.tools.values())) == len(domain.tools), domain.name
        assert all(re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", n) for n in domain.tools.values())
    assert len({d.name for d in plan.domains}) == len(plan.domains)
    assert all(s.reason for s in plan.skipped)


# ---------------------------------------------------------------------------------------------
# hand-made corpora


def shop() -> list[Operation]:
    """An api with users, orders (holding a user id), order items (holding an order id)."""
    return crud("shop", "user") + crud("shop", "order", "user") + crud("shop", "order_item", "order")


def big_api() -> list[Operation]:
    """200 operations: 40 entities in a chain of ids, five operations each."""
    ops: list[Operation] = []
    for i in range(40):
        ops += crud("cloud", f"res{i}", f"res{i - 1}" if i else None, prefix=f"/v1/res{i // 8}")
    return ops


def disconnected_api() -> list[Operation]:
    """Two unrelated halves (weather, invoices), each big enough for a domain."""
    return (
        crud("misc", "forecast")
        + [op("misc", "get_station", "station", consumes=("forecast",))]
        + crud("misc", "invoice")
        + [op("misc", "send_invoice", "invoice", "action", ("invoice", "customer"))]
    )


def singletons() -> list[Operation]:
    """Lonely operations: unrelated entities, one each, from small apis."""
    return [op(f"tiny{i}", "ping", f"thing{i}", "action") for i in range(3)]


def small_apis_sharing_an_entity() -> list[Operation]:
    """Three apis of two operations each about `payment`: only together are they a domain."""
    return [
        o
        for i in range(3)
        for o in (
            op(f"pay{i}", "get_payment", "payment", consumes=("payment",)),
            op(f"pay{i}", "refund_payment", "payment", "action", ("payment",)),
        )
    ]


def corpus() -> list[Operation]:
    return shop() + big_api() + disconnected_api() + singletons() + small_apis_sharing_an_entity()


def domain_of(plan: Plan, op_id: str) -> str:
    return next(d.name for d in plan.domains if op_id in d.operations)


def test_the_hand_made_corpus_keeps_every_invariant():
    ops = corpus()
    plan = cluster(ops)
    check_invariants(ops, plan, 5, 40)


def test_an_api_that_fits_is_one_domain_named_after_it():
    plan = cluster(shop())
    assert [len(d.operations) for d in plan.domains] == [15]
    (domain,) = plan.domains
    assert domain.name.startswith("shop-") and domain.apis == ["shop"]
    assert domain.entities == ["order", "order_item", "user"]


def test_an_api_of_200_operations_is_split_into_connected_domains_of_at_most_40():
    ops = big_api()
    plan = cluster(ops)
    check_invariants(ops, plan, 5, 40)
    assert len(plan.domains) >= 5 and not plan.skipped
    # every entity's five operations stay together
    for i in range(40):
        assert len({domain_of(plan, f"cloud:{n}_res{i}") for n in ("get", "create", "update", "delete")}) == 1


def test_one_entity_with_200_operations_is_cut_into_domains_within_bounds():
    ops = [op("flat", f"op{i:03}", "item", consumes=("item",)) for i in range(200)]
    plan = cluster(ops)
    check_invariants(ops, plan, 5, 40)
    assert not plan.skipped and len(plan.domains) >= 5


def test_a_part_louvain_cannot_cut_is_grown_into_even_connected_chunks():
    from toolgen.cluster import _grow

    ops = [op("flat", f"op{i:03}", "item", consumes=("item",)) for i in range(200)]
    assert [len(c) for c in _grow(ops, 40)] == [40] * 5
    chain = [op("chain", f"op{i:03}", f"e{i}", consumes=(f"e{i + 1}",)) for i in range(90)]
    chunks = _grow(chain, 40)
    assert [len(c) for c in chunks] == [30, 30, 30] and all(is_connected(c) for c in chunks)


def test_a_disconnected_api_becomes_one_domain_per_connected_part():
    ops = disconnected_api()
    plan = cluster(ops)
    check_invariants(ops, plan, 5, 40)
    assert len(plan.domains) == 2
    assert {tuple(d.entities) for d in plan.domains} == {("forecast", "station"), ("customer", "invoice")}


def test_lonely_singletons_are_skipped_with_a_reason():
    ops = singletons()
    plan = cluster(ops)
    assert not plan.domains
    assert [s.id for s in plan.skipped] == sorted(o.id for o in ops)
    assert all("too small and unrelated" in s.reason and "min_tools is 5" in s.reason for s in plan.skipped)


def test_small_apis_sharing_an_entity_merge_across_sources():
    ops = small_apis_sharing_an_entity()
    plan = cluster(ops)
    (domain,) = plan.domains
    assert domain.apis == ["pay0", "pay1", "pay2"] and len(domain.operations) == 6


def listed(ops: list[Operation]) -> list[Operation]:
    """The same operations as a list of functions (no one service's api)."""
    return [o.model_copy(update={"format": "function-list"}) for o in ops]


def test_a_small_piece_joins_the_domain_it_shares_an_entity_with():
    ops = listed(shop()) + [op("reviews", "get_review", "review", consumes=("order",))]
    plan = cluster(ops)
    check_invariants(ops, plan, 5, 40)
    assert domain_of(plan, "reviews:get_review") == domain_of(plan, "shop:get_order")


def test_a_service_with_domains_of_its_own_takes_no_other_apis_tools():
    """Slicebox's `/log` tools are no Kubernetes pod's logs: a service's records are its own."""
    ops = shop() + [op("reviews", "get_review", "review", consumes=("order",))]
    plan = cluster(ops)
    check_invariants(ops, plan, 5, 40)
    assert [s.id for s in plan.skipped] == ["reviews:get_review"]
    assert all(d.apis == ["shop"] for d in plan.domains)


def test_a_small_piece_never_overfills_a_domain():
    ops = listed(shop()) + [op("reviews", "get_review", "review", consumes=("order",))]
    plan = cluster(ops, max_tools=15)
    check_invariants(ops, plan, 5, 15)
    assert [s.id for s in plan.skipped] == ["reviews:get_review"]


def test_same_input_and_seed_give_byte_identical_plans_in_any_order():
    ops = corpus()
    first = cluster(ops, seed=3).model_dump_json()
    shuffled = list(ops)
    random.Random(1).shuffle(shuffled)
    assert cluster(shuffled, seed=3).model_dump_json() == first
    assert cluster(list(reversed(ops)), seed=3).model_dump_json() == first


def test_bad_bounds_and_duplicate_ids_are_refused():
    with pytest.raises(ValueError, match="min_tools"):
        cluster(shop(), min_tools=10, max_tools=5)
    with pytest.raises(ValueError, match="min_tools"):
        cluster(shop(), min_tools=0)
    with pytest.raises(ValueError, match="shop:get_user.*twice"):
        cluster(shop() + [op("shop", "get_user", "user")])


def test_components_split_a_group_by_its_entity_graph():
    ops = crud("a", "x") + crud("a", "y") + [op("a", "link", "z", consumes=("x", "y"))]
    assert len(components(ops[:10])) == 2
    assert len(components(ops)) == 1


# ---------------------------------------------------------------------------------------------
# properties on generated operation sets

ENTITIES = [f"e{i}" for i in range(12)]


@st.composite
def operation_sets(draw: Any) -> list[Operation]:
    n_apis = draw(st.integers(1, 6))
    ops = []
    for a in range(n_apis):
        n = draw(st.integers(1, 70))
        for i in range(n):
            entity = draw(st.sampled_from(ENTITIES))
            refs = draw(st.lists(st.sampled_from(ENTITIES), max_size=2))
            prefix = draw(st.sampled_from([None, "/a", "/b"]))
            ops.append(op(f"api{a}", f"op{i}", entity, "read", tuple(refs), (), prefix))
    return ops


@given(operation_sets(), st.integers(1, 6), st.integers(0, 30), st.integers(0, 3))
def test_property_invariants_hold_on_generated_operations(ops, min_tools, extra, seed):
    max_tools = min_tools + extra
    plan = cluster(ops, min_tools=min_tools, max_tools=max_tools, seed=seed)
    check_invariants(ops, plan, min_tools, max_tools)


@given(operation_sets(), st.randoms(use_true_random=False), st.integers(0, 3))
def test_property_plan_is_independent_of_input_order(ops, rnd, seed):
    shuffled = list(ops)
    rnd.shuffle(shuffled)
    assert cluster(shuffled, seed=seed).model_dump_json() == cluster(ops, seed=seed).model_dump_json()


# ---------------------------------------------------------------------------------------------
# relate(): relations between an api's entities read from names


def with_args(o: Operation, *names: str) -> Operation:
    return o.model_copy(update={"input_schema": {"type": "object", "properties": {n: {} for n in names}}})


def test_relate_reads_identifier_arguments_of_the_apis_own_entities():
    from toolgen.relate import relate

    ops = [
        op("aws", "describe_thing", "thing"),
        with_args(
            op("aws", "list_violations", "violation_event"), "thingName", "securityProfileArn", "startTime"
        ),
        with_args(op("other", "get_x", "x"), "thingName"),  # no `thing` in this api
    ]
    related = relate(ops)
    assert related[1].consumes == ["thing"]  # security_profile is no entity of the api
    assert related[2].consumes == [] and related[0] is ops[0]
    assert is_connected(related[:2]) and not is_connected(ops[:2])


def test_relate_joins_a_sub_entity_to_the_longest_entity_it_extends():
    from toolgen.relate import relate

    ops = [
        op("db", "get_table", "table"),
        op("db", "get_global_table", "global_table"),
        op("db", "get_global_table_settings", "global_table_settings"),
        op("db", "get_debit_reversal", "debit_reversal"),
        op("db", "get_reversal", "reversal"),
        op("db", "get_job", "job"),
        op("db", "get_job_run", "job_run"),
        op("db", "get_io", "io"),
        op("db", "get_io_stat", "io_stat"),  # `io` is shorter than MIN_STEM
        op("db", "get_deliverystat", "deliverystat"),
        op("db", "get_delivery_stat", "delivery_stat"),  # one name spelled in other words
    ]
    consumes = {o.entity: o.consumes for o in relate(ops)}
    assert consumes["global_table_settings"] == ["global_table"]
    assert consumes["global_table"] == ["table"]
    assert consumes["debit_reversal"] == ["reversal"]
    assert consumes["job_run"] == ["job"] and consumes["io_stat"] == [] and consumes["table"] == []
    twins = [o for o in relate(ops) if o.entity.replace("_", "") == "deliverystat"]
    assert len(twins) == 2 and is_connected(twins) and not is_connected(ops[-2:])


def test_relate_keeps_order_and_is_deterministic():
    from toolgen.relate import relate

    ops = corpus()
    assert [o.id for o in relate(ops)] == [o.id for o in ops]
    assert [o.model_dump() for o in relate(ops)] == [o.model_dump() for o in relate(list(ops))]


def test_tools_of_two_apis_with_one_name_get_distinct_names_in_their_domain():
    ops = [
        op("alpha", "list_customers", "customer", kind="read"),
        op("alpha", "get_customer", "customer", kind="read"),
        op("beta", "list_customers", "customer", kind="read"),
    ]
    names = tool_names(ops)
    assert names[ops[0].id] == "list_customers" and names[ops[1].id] == "get_customer"
    assert names[ops[2].id] == "beta_list_customers"  # the dominant api keeps the plain name
