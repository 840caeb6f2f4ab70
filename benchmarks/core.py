"""The core benchmark: episode creation, a read call, a multi-step write call and `digest()`.

    python benchmarks/core.py --json core.json          # 1k, 10k and 100k seed rows (~1-2 min)
    python benchmarks/core.py --quick --json core.json  # 1k rows, few repetitions (smoke test)

Each operation runs on the benchmark shop (`_common.write_shop_domain`) scaled to N seed rows
and is timed, interleaved, against its raw sqlite3 equivalent in the same process:

| name      | toolgym                                  | baseline (raw sqlite3)                          |
|-----------|------------------------------------------|-------------------------------------------------|
| episode   | `domain.episode()` + close, no calls (the connection of a closed episode, restored) | `connect(":memory:")` + `deserialize(snapshot)` |
| episode_cycle | `domain.episode()`, one place_order call, close (the restore undoes the call) | deserialize, the same place_order by hand, close |
| read      | `ep.call("get_customer", ...)`           | a primary-key SELECT                            |
| write     | `ep.call("transfer_credit", ...)`: get, get, require, update, update | floor: one UPDATE in a BEGIN/COMMIT transaction (not like for like) |
| write_seq | the same transfer_credit calls           | its statements by hand: 2 SELECTs, 2 UPDATEs in one transaction |
| write_order | `ep.call("place_order", ...)`, 2 items (11 data steps) | floor: one UPDATE in a BEGIN/COMMIT transaction (not like for like) |
| write_order_seq | the same place_order calls       | place_order's statements by hand: 3 SELECTs, 3 INSERTs, 4 UPDATEs in one transaction |
| digest    | `ep.digest()` after 10 place_order calls (hashes the changed rows) | the changed rows read by key and hashed by hand |
| digest_full | `ep.full_digest()` (every row)         | SELECT every table in key order (fetchall)      |

Writes run on one episode with varying customers and products; the shop's balances and stock
are large enough that no call fails. The like-for-like ratios are the `*_seq` rows (the same
statements written by hand) and `digest`/`digest_full` against the same rows read by hand; the
`write`/`write_order` rows' single-UPDATE baseline is only the floor of any write. Targets
(checked at every size): episode and episode_cycle <= 1.5x raw deserialize; read <= 40 us median;
the five-step write <= 80 us median and both writes <= 2x their hand-written statements.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable
from contextlib import closing
from typing import Any

from _common import (
    ShopIds,
    Target,
    measure_interleaved,
    measure_pair,
    result_row,
    seed_connection,
    shop_suite_main,
)

from simulator import Domain, Episode

#: place_order calls made before `digest()` is timed (a short rollout: ~60 changed rows)
DIGEST_WRITES = 10

TARGETS = (
    Target("episode", "ratio", 1.5, "episode creation <= 1.5x raw deserialize"),
    Target("episode_cycle", "ratio", 1.5, "episode + one write + close <= 1.5x the same by hand"),
    Target("read", "median_us", 40.0, "read call <= 40 us median"),
    Target("write", "median_us", 80.0, "multi-step write call (transfer_credit, 5 steps) <= 80 us median"),
    Target("write_seq", "ratio", 2.0, "transfer_credit <= 2x its statements by hand"),
    Target("write_order_seq", "ratio", 2.0, "place_order (2 items) <= 2x its statements by hand"),
)

#: The hand-written statements of the raw baselines.
RAW_SQL = {
    "read": "SELECT customer_id, name, email, vip, balance, notes FROM customers WHERE customer_id = ?",
    "update": "UPDATE products SET stock = stock - ? WHERE sku = ?",
    "get_product": "SELECT sku, title, price, stock, tags FROM products WHERE sku = ?",
    "insert_order": "INSERT INTO orders (order_id, customer_id, status, total, created_at) VALUES (?, ?, ?, ?, ?)",
    "set_stock": "UPDATE products SET stock = ? WHERE sku = ?",
    "insert_item": "INSERT INTO order_items (id, order_id, sku, quantity, price) VALUES (?, ?, ?, ?, ?)",
    "set_balance": "UPDATE customers SET balance = ? WHERE customer_id = ?",
    "set_total": "UPDATE orders SET total = ? WHERE order_id = ?",
}


def order_arguments(ids: ShopIds, count: int = 4096) -> list[dict[str, Any]]:
    """`count` varied place_order arguments: every customer and product in turn, two items each."""
    out = []
    nc, ns = len(ids.customers), len(ids.skus)
    for i in range(count):
        a, b = ids.skus[(2 * i) % ns], ids.skus[(2 * i + 1) % ns]
        items = [{"sku": a, "quantity": 1 + i % 3}]
        if b != a:
            items.append({"sku": b, "quantity": 1 + (i + 1) % 3})
        out.append({"customer_id": ids.customers[(7 * i) % nc], "items": items})
    return out


def raw_place_order(conn: sqlite3.Connection, first_item_id: int) -> Callable[[int, dict[str, Any]], None]:
    """place_order written directly against sqlite3: what the tool does, minus toolgym."""
    sql = RAW_SQL
    next_item = [first_item_id]

    def run(i: int, args: dict[str, Any]) -> None:
        conn.execute("BEGIN")
        customer = conn.execute(sql["read"], (args["customer_id"],)).fetchone()
        order_id = f"O-R{i:09d}"
        conn.execute(sql["insert_order"], (order_id, customer[0], "pending", 0, "2026-01-01T09:00:00Z"))
        total = 0.0
        for item in args["items"]:
            product = conn.execute(sql["get_product"], (item["sku"],)).fetchone()
            if product[3] < item["quantity"]:
                raise AssertionError("out of stock")
            conn.execute(sql["set_stock"], (product[3] - item["quantity"], product[0]))
            conn.execute(
                sql["insert_item"], (next_item[0], order_id, product[0], item["quantity"], product[2])
            )
            next_item[0] += 1
            total = round(total + product[2] * item["quantity"], 2)
        if customer[4] < total:
            raise AssertionError("balance too low")
        conn.execute(sql["set_balance"], (round(customer[4] - total, 2), customer[0]))
        conn.execute(sql["set_total"], (total, order_id))
        conn.execute("COMMIT")

    return run


def bench_size(domain: Domain, ids: ShopIds, rows: int, reps: int, seconds: float, warmup: int) -> list[dict]:
    """Every measurement at one size; returns its result rows."""
    results = []
    opts = {"reps": reps, "max_seconds": seconds, "warmup": warmup}
    snapshot = domain.snapshot()

    def raw_episode(i: int) -> sqlite3.Connection:
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.deserialize(snapshot)
        return conn

    ep_t, raw_t = measure_pair(
        lambda i: domain.episode(seed=i),
        raw_episode,
        teardown=Episode.close,
        baseline_teardown=sqlite3.Connection.close,
        **opts,
    )
    assert raw_t is not None
    results.append(result_row("episode", rows, ep_t.median_us, "raw deserialize", raw_t.median_us))

    # a whole episode: open, one place_order, close (the pool restores the changed rows)
    orders = order_arguments(ids)
    no = len(orders)
    seed_next_item = _next_item(snapshot)

    def episode_cycle(i: int) -> None:
        with domain.episode(seed=i) as ep:
            ep.call("place_order", orders[i % no])

    def raw_cycle(i: int) -> None:
        conn = raw_episode(i)
        try:
            raw_place_order(conn, seed_next_item)(i, orders[i % no])
        finally:
            conn.close()

    cycle_t, raw_cycle_t = measure_pair(episode_cycle, raw_cycle, **opts)
    assert raw_cycle_t is not None
    results.append(
        result_row(
            "episode_cycle", rows, cycle_t.median_us, "raw deserialize + place_order", raw_cycle_t.median_us
        )
    )

    # read: a primary-key get through the tool vs a primary-key SELECT
    customers = [{"customer_id": c} for c in ids.customers]
    nc = len(customers)
    with domain.episode() as ep, closing(seed_connection(domain)) as conn:
        read_sql = RAW_SQL["read"]
        read_t, sel_t = measure_pair(
            lambda i: ep.call("get_customer", customers[(i * 7919) % nc]),
            lambda i: conn.execute(read_sql, (ids.customers[(i * 7919) % nc],)).fetchone(),
            **opts,
        )
    assert sel_t is not None
    results.append(result_row("read", rows, read_t.median_us, "raw PK SELECT", sel_t.median_us))

    # multi-step write: place_order with two items on one episode, arguments varying per call
    ep = domain.episode()
    raw_update = seed_connection(domain)
    raw_seq = seed_connection(domain)
    try:
        update_sql = RAW_SQL["update"]
        next_item_id = raw_seq.execute("SELECT coalesce(max(id), 0) + 1 FROM order_items").fetchone()[0]
        place = raw_place_order(raw_seq, next_item_id)

        def raw_update_txn(i: int) -> None:
            raw_update.execute("BEGIN")
            raw_update.execute(update_sql, (1, ids.skus[i % len(ids.skus)]))
            raw_update.execute("COMMIT")

        write_t, upd_t, seq_t = measure_interleaved(
            [
                lambda i: ep.call("place_order", orders[i % no]),
                raw_update_txn,
                lambda i: place(i, orders[i % no]),
            ],
            **opts,
        )
    finally:
        ep.close()
        raw_update.close()
        raw_seq.close()
    results.append(
        result_row("write_order", rows, write_t.median_us, "floor: one UPDATE txn", upd_t.median_us)
    )
    results.append(
        result_row("write_order_seq", rows, write_t.median_us, "raw place_order txn", seq_t.median_us)
    )

    # multi-step write: transfer_credit (get, get, require, update, update) vs the same by hand
    cs = ids.customers
    with domain.episode() as ep, closing(seed_connection(domain)) as conn:
        get_sql = "SELECT customer_id, balance FROM customers WHERE customer_id = ?"
        set_sql = "UPDATE customers SET balance = ? WHERE customer_id = ?"

        def raw_transfer(i: int) -> None:
            a, b = cs[i % len(cs)], cs[(i * 7 + 3) % len(cs)]
            conn.execute("BEGIN")
            source = conn.execute(get_sql, (a,)).fetchone()
            target = conn.execute(get_sql, (b,)).fetchone()
            if source[1] < 0.01:
                raise AssertionError("balance too low")
            conn.execute(set_sql, (round(source[1] - 0.01, 2), a))
            conn.execute(set_sql, (round(target[1] + 0.01, 2), b))
            conn.execute("COMMIT")

        tr_t, raw_tr_t, upd2_t = measure_interleaved(
            [
                lambda i: ep.call(
                    "transfer_credit",
                    {
                        "from_customer_id": cs[i % len(cs)],
                        "to_customer_id": cs[(i * 7 + 3) % len(cs)],
                        "amount": 0.01,
                    },
                ),
                raw_transfer,
                lambda i: (
                    conn.execute("BEGIN"),
                    conn.execute(set_sql, (1.0, cs[i % len(cs)])),
                    conn.execute("COMMIT"),
                ),
            ],
            **opts,
        )
    results.append(result_row("write", rows, tr_t.median_us, "floor: one UPDATE txn", upd2_t.median_us))
    results.append(result_row("write_seq", rows, tr_t.median_us, "raw transfer txn", raw_tr_t.median_us))

    # digest after a short rollout (DIGEST_WRITES place_order calls): the changed rows hashed, vs the
    # same rows read by key and hashed by hand; the full digest vs reading every table
    scans = [
        f'SELECT * FROM "{name}" ORDER BY "{info.pk}"'  # noqa: S608 - names from the spec
        for name, info in sorted(domain.tables.items())
    ]
    with domain.episode() as ep, closing(seed_connection(domain)) as conn:
        for i in range(DIGEST_WRITES):
            ep.call("place_order", orders[(i * 131) % no])
        changed = sorted(ep.changes(), key=repr)
        ep_conn = ep.conn

        def raw_changed(i: int) -> str:
            h = hashlib.sha256()
            for table, key in changed:
                info = domain.tables[table]
                h.update(repr(ep_conn.execute(info.select_by_pk, (key,)).fetchone()).encode())
            return h.hexdigest()

        fns = [lambda i: ep.digest(), raw_changed, lambda i: ep.full_digest()]
        fns.append(lambda i: [conn.execute(s).fetchall() for s in scans])
        timings = measure_interleaved(fns, **{**opts, "warmup": min(warmup, 3)})
    results.append(
        result_row("digest", rows, timings[0].median_us, "raw changed rows + sha256", timings[1].median_us)
    )
    results.append(
        result_row("digest_full", rows, timings[2].median_us, "raw full scan", timings[3].median_us)
    )
    return results


def _next_item(snapshot: bytes) -> int:
    """The first free order_items id of the seed state."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.deserialize(snapshot)
        return int(conn.execute("SELECT coalesce(max(id), 0) + 1 FROM order_items").fetchone()[0])
    finally:
        conn.close()


def main(argv: list[str] | None = None) -> int:
    return shop_suite_main(
        "core", __doc__, bench_size, TARGETS, argv, reps=2000, quick_reps=200, warmup=100, quick_warmup=20
    )


if __name__ == "__main__":
    raise SystemExit(main())
