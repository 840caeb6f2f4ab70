"""Where the time of a read goes: `get_order_details` on tau2-retail, whole and in parts.

    python benchmarks/profile_read.py --json read.json   # ~20 s
    python benchmarks/profile_read.py --quick            # few repetitions (smoke test)

The tool runs the fragment `order_view` (domains/tau2-retail/domain.yaml): two gets by key, three
lists by order id, then a `return` of merge/object/map/pick. Timed interleaved in one run over the
same varying orders (medians, microseconds):

| name        | what                                                                                       |
|-------------|--------------------------------------------------------------------------------------------|
| call        | `ep.call("get_order_details", ...)`: the whole call (as `peer.py`'s `read` row)             |
| execute     | the tool's compiled steps alone (`CompiledTool.execute`): the call less its argument check, budget meter and record |
| sql         | its five statements by hand (the same SQL text), rows fetched                              |
| sql_decoded | the same, each row decoded by its table's decoder (`TableInfo.decode`)                     |
| expression  | the `return` expression alone, on environments holding the rows                            |
| by_hand     | the whole read written by hand in Python (plain SQL, `json.loads`, the result built in place): its result is checked equal to the tool's for every order |

The parts printed after the table: call overhead (`call - execute`), SQL (`sql`), row decoding
(`sql_decoded - sql`), the `return` expression (`expression`), and the steps' own Python
(`execute - sql_decoded - expression`: dispatch, environments, parameters, statement lookup).
`call` and `by_hand` share the `ratio` column (`call / by_hand`). The parts are differences of
medians, so approximate; the expression alone (not interleaved with SQLite work) measures ~40%
less than here (its caches are warm), so the steps' own Python may show near zero.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from typing import Any

from _common import build_report, measure_interleaved, print_results, result_row, write_report
from peer import DOMAIN, call_arguments

from scripts.tau2_retail.tables import ORDER_OPTIONAL
from simulator import load_domain

#: the read written by hand: plain statements, as a hand-written tool would run them
HAND_SQL = {
    "order": "SELECT * FROM orders WHERE order_id = ?",
    "address": "SELECT * FROM addresses WHERE address_id = ?",
    "items": "SELECT * FROM order_items WHERE order_id = ? ORDER BY position, line_id",
    "fulfillments": "SELECT * FROM fulfillments WHERE order_id = ? ORDER BY position, fulfillment_id",
    "payments": "SELECT * FROM payment_history WHERE order_id = ? ORDER BY position, payment_id",
}
ORDER_JSON = {"exchange_items", "exchange_new_items", "return_items"}


def read_by_hand(conn: sqlite3.Connection, order_id: str) -> dict[str, Any]:
    """get_order_details written by hand against the same database."""
    cur = conn.execute(HAND_SQL["order"], (order_id,))
    names = [d[0] for d in cur.description]
    found = cur.fetchone()
    if found is None:
        raise LookupError("Order not found")
    order = dict(zip(names, found, strict=True))
    for name in ORDER_JSON:
        if order[name] is not None:
            order[name] = json.loads(order[name])
    a = conn.execute(HAND_SQL["address"], (order["address_id"],)).fetchone()
    items = [
        {"name": r[5], "product_id": r[4], "item_id": r[3], "price": r[6], "options": json.loads(r[7])}
        for r in conn.execute(HAND_SQL["items"], (order_id,))
    ]
    fulfillments = [
        {"tracking_id": json.loads(r[3]), "item_ids": json.loads(r[4])}
        for r in conn.execute(HAND_SQL["fulfillments"], (order_id,))
    ]
    payments = [
        {"transaction_type": r[3], "amount": r[4], "payment_method_id": r[5]}
        for r in conn.execute(HAND_SQL["payments"], (order_id,))
    ]
    out = {
        "order_id": order["order_id"],
        "user_id": order["user_id"],
        "address": {
            "address1": a[1],
            "address2": a[2],
            "city": a[3],
            "country": a[4],
            "state": a[5],
            "zip": a[6],
        },
        "items": items,
        "status": order["status"],
        "fulfillments": fulfillments,
        "payment_history": payments,
    }
    out.update((name, order[name]) for name in ORDER_OPTIONAL)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON here")
    parser.add_argument("--quick", action="store_true", help="few repetitions (smoke test)")
    args = parser.parse_args(argv)

    domain = load_domain(DOMAIN)
    reads, _ = call_arguments(domain)
    ids = [r["order_id"] for r in reads]
    tool = domain.tools["get_order_details"]
    fragment = tool.steps[0].steps  # type: ignore[attr-defined]  # (the `use` of order_view)
    *data_steps, last = fragment
    tables = {
        name: domain.tables[name]
        for name in ("orders", "addresses", "order_items", "fulfillments", "payment_history")
    }
    ep = domain.episode()
    conn = ep.conn
    for order_id in ids:  # the baseline is honest: the same result for every order
        if read_by_hand(conn, order_id) != ep.call("get_order_details", {"order_id": order_id}):
            raise AssertionError(f"the hand-written read disagrees with the tool on {order_id}")

    statements = [
        (tables["orders"].select_by_pk, "pk", tables["orders"]),
        (tables["addresses"].select_by_pk, "pk", tables["addresses"]),
        *(
            (step.query._statement(step.query._always or (), False), "f0", step.info)
            for step in data_steps[2:]
        ),
    ]
    address_of = {o: conn.execute(HAND_SQL["order"], (o,)).fetchone()[3] for o in ids}

    def sql(i: int, decoded: bool = False) -> Any:
        order_id = ids[i % len(ids)]
        out = []
        for k, (text, name, info) in enumerate(statements):
            value = address_of[order_id] if k == 1 else order_id
            rows = conn.execute(text, {name: value}).fetchall()
            out.append([info.decode(r) for r in rows] if decoded else rows)
        return out

    envs = []
    for order_id in ids:
        env: dict[str, Any] = {"order_id": order_id}
        for step in data_steps:
            ep.cache.clear()
            env[step.bind] = step.run(ep, env)
        envs.append(env)
    value = last.value

    def execute(i: int) -> Any:
        ep.cache.clear()
        return tool.execute(ep, reads[i % len(reads)])

    reps = 300 if args.quick else 4000
    timings = measure_interleaved(
        [
            lambda i: ep.call("get_order_details", reads[i % len(reads)]),
            execute,
            sql,
            lambda i: sql(i, True),
            lambda i: value(envs[i % len(envs)]),
            lambda i: read_by_hand(conn, ids[i % len(ids)]),
        ],
        reps=reps,
        warmup=20 if args.quick else 200,
        max_seconds=2.0 if args.quick else 20.0,
        rounds=10 if args.quick else 40,
    )
    call, exe, raw, decoded, expression, hand = (t.median_us for t in timings)
    rows = domain.row_count()
    results = [
        result_row("call", rows, call, "by_hand", hand),
        result_row("execute", rows, exe, None, None),
        result_row("sql", rows, raw, None, None),
        result_row("sql_decoded", rows, decoded, None, None),
        result_row("expression", rows, expression, None, None),
        result_row("by_hand", rows, hand, None, None),
    ]
    parts = {
        "call overhead (call - execute)": call - exe,
        "SQL: five statements, rows fetched (sql)": raw,
        "row decoding (sql_decoded - sql)": decoded - raw,
        "the return expression (expression)": expression,
        "steps' own Python (execute - sql_decoded - expression)": exe - decoded - expression,
    }
    report = build_report(
        "profile_read",
        results,
        domain=domain.ref,
        quick=args.quick,
        parts_us={k: round(v, 2) for k, v in parts.items()},
    )
    print_results(report, title="get_order_details on tau2-retail, whole and in parts (medians, us)")
    for name, us in parts.items():
        print(f"{us:7.1f} us  {name}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.json:
        write_report(report, args.json)
    ep.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
