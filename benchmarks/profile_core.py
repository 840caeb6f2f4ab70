"""Where the time of a read and of a multi-step write call goes (a tool for working on the core).

    python benchmarks/profile_core.py                 # 10k rows: ablations, statements, components
    python benchmarks/profile_core.py --rows 100000 --cprofile

Four views, all on the benchmark shop (`_common.write_shop_domain`), medians in microseconds:

- **ablations**: the end-to-end call with one piece of the runtime replaced by a free stand-in
  (schema validation always true, a constant clock, no change log kept, an in-memory id counter),
  so `full - ablated` is what that piece costs per call.
  The stand-ins are set on the episode instance / domain object of this process only.
- **statements**: every SQL statement one call executes, with its count and time, measured
  through a timing proxy around the episode's connection (proxy overhead is subtracted).
- **steps**: each step kind's time per write call (place_order and transfer_credit), timed around
  every step's `run` with every step called through its method (`CompiledTool.call_every_step`:
  the general path; the bodies real calls run write reads by key, creates, one-column updates and loops
  out, so this view gives each kind's shape, not the call's own time; nested steps inside
  `for_each` count in both; `let` and `require` are written out, so they are not timed).
- **components**: single runtime operations timed in a loop (validation, clock, ids, codecs).

`--cprofile` adds cProfile's top functions (which inflate Python-heavy code; use it for shape,
the three views above for numbers).
"""

from __future__ import annotations

import argparse
import copy
import cProfile
import itertools
import pstats
import re
import sqlite3
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from _common import ShopIds, load_shop, measure, measure_interleaved
from core import RAW_SQL as core_sql
from core import order_arguments, raw_place_order
from rich.console import Console
from rich.table import Table

from simulator import Domain, Episode

REPS = 3000


class _AlwaysValid:
    def is_valid(self, _args: Any) -> bool:
        return True


ABLATIONS: list[tuple[str, set[str]]] = [
    ("full call", set()),
    ("- jsonschema validation", {"validation"}),
    ("- clock (constant now, no SELECT)", {"clock"}),
    ("- change log (not kept)", {"change log"}),
    ("- id generation (counter)", {"ids"}),
    ("- all four", {"validation", "clock", "change log", "ids"}),
]


def ablated_episode(domain: Domain, what: set[str]) -> Episode:
    """An episode with pieces of its runtime replaced by free stand-ins (instance attributes only)."""
    ep = domain.episode()
    if "validation" in what:
        ep.domain = copy.copy(domain)
        ep.domain.validators = {name: _AlwaysValid() for name in domain.validators}
    if "clock" in what:
        fixed_now = ep.now()
        ep.now = lambda: fixed_now  # type: ignore[method-assign]
    if "change log" in what:
        ep.changed = lambda table, pk: None  # type: ignore[method-assign]
    if "ids" in what:
        counter = itertools.count(1)
        ep.next_id = lambda table, row=None, probe=True: (  # type: ignore[method-assign]
            f"{table.spec.id_prefix}X{next(counter):09d}"
            if table.spec.columns[table.pk].type == "string"
            else 10_000_000 + next(counter)
        )
    return ep


def ablation_table(domain: Domain, ids: ShopIds, reps: int) -> Table:
    """Every variant interleaved with the others (20 rounds), so drift hits all alike."""
    orders = order_arguments(ids)
    customers = [{"customer_id": c} for c in ids.customers]
    nc, no = len(customers), len(orders)
    raw = sqlite3.connect(":memory:", isolation_level=None)
    raw.deserialize(domain.snapshot())
    raw.execute("PRAGMA foreign_keys=ON")
    place = raw_place_order(raw, raw.execute("SELECT max(id) + 1 FROM order_items").fetchone()[0])
    sel = "SELECT customer_id, name, email, vip, balance, notes FROM customers WHERE customer_id = ?"
    bare = domain.episode()
    tool_r, tool_w = domain.tools["get_customer"], domain.tools["place_order"]

    def bare_write(i: int) -> Any:
        bare.conn.execute("BEGIN")
        result = tool_w.execute(bare, orders[i % no])
        bare.conn.execute("COMMIT")
        return result

    labels = [label for label, _ in ABLATIONS]
    eps = [ablated_episode(domain, what) for _, what in ABLATIONS]
    reads: list[Callable[[int], Any]] = [
        (lambda i, ep=ep: ep.call("get_customer", customers[(i * 7919) % nc])) for ep in eps
    ]
    writes: list[Callable[[int], Any]] = [
        (lambda i, ep=ep: ep.call("place_order", orders[i % no])) for ep in eps
    ]
    labels += ["tool.execute only (write: + BEGIN/COMMIT)", "raw sqlite3 equivalent"]
    reads += [
        lambda i: tool_r.execute(bare, customers[(i * 7919) % nc]),
        lambda i: raw.execute(sel, (ids.customers[(i * 7919) % nc],)).fetchone(),
    ]
    writes += [bare_write, lambda i: place(i, orders[i % no])]
    read_t = measure_interleaved(reads, reps=reps, rounds=20, max_seconds=30)
    write_t = measure_interleaved(writes, reps=reps, rounds=20, max_seconds=60)
    for ep in [*eps, bare]:
        ep.close()
    raw.close()

    table = Table(title="ablations: median us per call (delta = what the piece costs)", title_justify="left")
    for col in ("variant", "read", "read delta", "write", "write delta"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    full_r, full_w = read_t[0].median_us, write_t[0].median_us
    for k, label in enumerate(labels):
        r, w = read_t[k].median_us, write_t[k].median_us
        table.add_row(
            label,
            f"{r:.1f}",
            "" if k == 0 else f"{full_r - r:+.1f}",
            f"{w:.1f}",
            "" if k == 0 else f"{full_w - w:+.1f}",
        )
    return table


def sql_variants_table(domain: Domain, ids: ShopIds, reps: int) -> Table:
    """place_order by hand on raw sqlite3, adding toolgym's extra SQL piece by piece (interleaved)."""
    orders = order_arguments(ids)
    no = len(orders)
    conns = []
    for _ in range(5):
        c = sqlite3.connect(":memory:", isolation_level=None)
        c.deserialize(domain.snapshot())
        c.execute("PRAGMA foreign_keys=ON")
        conns.append(c)
    first = conns[0].execute("SELECT max(id) + 1 FROM order_items").fetchone()[0]
    variants = [
        ("raw place_order (positional params)", raw_place_order(conns[0], first)),
        ("+ named (dict) params", _raw_variant(conns[1], first, named=True)),
        ("+ SELECT before each UPDATE", _raw_variant(conns[2], first, reselect=True)),
        (
            "+ bookkeeping SQL (meta x8, change log x7, id checks x3)",
            _raw_variant(conns[3], first, bookkeeping=True),
        ),
        ("all three (~ toolgym's 34 statements)", _raw_variant(conns[4], first, True, True, True)),
    ]
    timings = measure_interleaved(
        [(lambda i, fn=fn: fn(i, orders[i % no])) for _, fn in variants], reps=reps, rounds=20, max_seconds=30
    )
    for c in conns:
        c.close()
    table = Table(title="SQL side of place_order: raw variants, median us", title_justify="left")
    for col in ("variant", "median us", "delta vs raw"):
        table.add_column(col, justify="left" if col == "variant" else "right")
    base = timings[0].median_us
    for (label, _), t in zip(variants, timings, strict=True):
        table.add_row(label, f"{t.median_us:.1f}", "" if t is timings[0] else f"{t.median_us - base:+.1f}")
    return table


_META_GET = "SELECT value FROM _toolgym_meta WHERE key = ?"
_META_SET = "INSERT INTO _toolgym_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"
_CHANGE = "INSERT OR IGNORE INTO _toolgym_changes (tbl, pk) VALUES (?, ?)"


def _raw_variant(
    conn: sqlite3.Connection,
    first_item_id: int,
    named: bool = False,
    reselect: bool = False,
    bookkeeping: bool = False,
) -> Callable[[int, dict[str, Any]], None]:
    """place_order by hand with toolgym's habits switched on one by one."""
    next_item = [first_item_id]
    ticks = [0]

    texts: dict[str, str] = {}
    keys = [f"p{k}" for k in range(16)]

    def ex(sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        if not named:
            return conn.execute(sql, params)
        text = texts.get(sql)
        if text is None:
            names = iter(keys)
            text = texts[sql] = re.sub(r"\?", lambda _m: ":" + next(names), sql)
        return conn.execute(text, dict(zip(keys, params, strict=False)))

    def meta_get(key: str) -> None:
        if bookkeeping:
            conn.execute(_META_GET, (key,)).fetchone()

    def log(table: str, pk: Any) -> None:
        if bookkeeping:
            conn.execute(_CHANGE, (table, pk))

    def run(i: int, args: dict[str, Any]) -> None:
        conn.execute("BEGIN")
        meta_get("ticks")  # env["now"]
        customer = ex(core_sql["read"], (args["customer_id"],)).fetchone()
        order_id = f"O-V{i:09d}"
        if bookkeeping:
            meta_get("ticks")  # now() for the create's defaults
            meta_get("id:orders")
            conn.execute("SELECT 1 FROM orders WHERE order_id = ?", (order_id,)).fetchone()
            conn.execute(_META_SET, ("id:orders", i))
        ex(core_sql["insert_order"], (order_id, customer[0], "pending", 0, "2026-01-01T09:00:00Z"))
        log("orders", order_id)
        total = 0.0
        for item in args["items"]:
            product = ex(core_sql["get_product"], (item["sku"],)).fetchone()
            if reselect:
                ex(core_sql["get_product"], (item["sku"],)).fetchone()
            ex(core_sql["set_stock"], (product[3] - item["quantity"], product[0]))
            log("products", product[0])
            if bookkeeping:
                meta_get("ticks")
                conn.execute("SELECT coalesce(max(id), 0) + 1 FROM order_items").fetchone()
            ex(core_sql["insert_item"], (next_item[0], order_id, product[0], item["quantity"], product[2]))
            log("order_items", next_item[0])
            next_item[0] += 1
            total = round(total + product[2] * item["quantity"], 2)
        if reselect:
            ex(core_sql["read"], (args["customer_id"],)).fetchone()
        ex(core_sql["set_balance"], (round(customer[4] - total, 2), customer[0]))
        log("customers", customer[0])
        if reselect:
            ex("SELECT * FROM orders WHERE order_id = ?", (order_id,)).fetchone()
        ex(core_sql["set_total"], (total, order_id))
        log("orders", order_id)
        if bookkeeping:
            meta_get("ticks")
            ticks[0] += 1
            conn.execute(_META_SET, ("ticks", ticks[0]))
        conn.execute("COMMIT")

    return run


class _TimedConnection:
    """Wraps a sqlite3 connection; records the time of each execute (incl. the first step) by SQL."""

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn
        self.times: dict[str, list[float]] = defaultdict(list)
        self.recording = False

    def execute(self, sql: str, params: Any = ()) -> sqlite3.Cursor:
        t0 = time.perf_counter_ns()
        cur = self._conn.execute(sql, params)
        t1 = time.perf_counter_ns()
        if self.recording:
            self.times[sql].append((t1 - t0) / 1000)
        return cur

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


def _label(sql: str) -> str:
    text = " ".join(sql.split())
    return text if len(text) <= 90 else text[:87] + "..."


def statement_table(domain: Domain, ids: ShopIds, kind: str, calls: int) -> Table:
    orders = order_arguments(ids)
    customers = [{"customer_id": c} for c in ids.customers]
    ep = domain.episode()
    proxy = _TimedConnection(ep.conn)
    ep.conn = proxy  # type: ignore[assignment]

    def call(i: int) -> Any:
        if kind == "read":
            return ep.call("get_customer", customers[i % len(customers)])
        return ep.call("place_order", orders[i % len(orders)])

    for i in range(100):
        call(i)
    proxy.recording = True
    t = measure(lambda i: call(i + 100), reps=calls, warmup=0, max_seconds=30)
    proxy.recording = False
    # what the proxy itself adds per execute: time a no-op-ish statement both ways
    real = ep.conn._conn  # type: ignore[attr-defined]
    direct = measure(lambda i: real.execute("SELECT 1"), reps=5000).median_us
    wrapped = measure(lambda i: proxy.execute("SELECT 1"), reps=5000).median_us
    overhead = max(0.0, wrapped - direct)
    ep.conn = real
    ep.close()
    n = t.n
    total_stmts = sum(len(v) for v in proxy.times.values()) / n
    table = Table(
        title=(
            f"statements of one {kind} call ({'get_customer' if kind == 'read' else 'place_order, 2 items'}): "
            f"{total_stmts:.0f} executes; call median {t.median_us - overhead * total_stmts:.1f} us "
            f"(proxy overhead {overhead:.2f} us/execute removed)"
        ),
        title_justify="left",
    )
    for col in ("sql", "per call", "median us", "us per call"):
        table.add_column(col, justify="left" if col == "sql" else "right")
    sql_total = 0.0
    rows = []
    for sql, times in proxy.times.items():
        per_call = len(times) / n
        med = sorted(times)[len(times) // 2]
        mean = sum(times) / len(times)
        cost = per_call * max(0.0, mean - overhead)
        sql_total += cost
        rows.append((cost, _label(sql), per_call, med))
    for cost, label, per_call, med in sorted(rows, reverse=True):
        table.add_row(label, f"{per_call:.1f}", f"{med:.2f}", f"{cost:.1f}")
    table.add_section()
    table.add_row("all SQL (mean-based)", f"{total_stmts:.0f}", "", f"{sql_total:.1f}")
    table.add_row(
        "Python outside sqlite3 (call median - SQL)",
        "",
        "",
        f"{t.median_us - overhead * total_stmts - sql_total:.1f}",
    )
    return table


def component_table(domain: Domain, ids: ShopIds, reps: int) -> Table:
    ep = domain.episode()
    orders = order_arguments(ids)
    customers = domain.tables["customers"]
    order_info = domain.tables["orders"]
    raw_row = ep.conn.execute(customers.select_by_pk, {"pk": ids.customers[0]}).fetchone()
    decoded = customers.decode(raw_row)
    products = domain.tables["products"]
    product_raw = ep.conn.execute(products.select_by_pk, {"pk": ids.skus[0]}).fetchone()
    vw, vr = domain.validators["place_order"], domain.validators["get_customer"]
    items: list[tuple[str, Callable[[int], Any]]] = [
        ("validator.is_valid(get_customer args)", lambda i: vr.is_valid({"customer_id": "C-000001"})),
        ("validator.is_valid(place_order args, 2 items)", lambda i: vw.is_valid(orders[i % len(orders)])),
        ("ep.now() (known)", lambda i: ep.now()),
        (
            "domain.clock_text(a tick past the kept ones) (day text + time of day)",
            lambda i: _clock(domain, i),
        ),
        ("domain.render_time (timedelta + strftime, the general path)", lambda i: _render(domain, i)),
        ("ep._save() of a place_order's log and counters (BEGIN .. COMMIT)", lambda i: _save(ep, i)),
        ("BEGIN + COMMIT (empty)", lambda i: (ep.conn.execute("BEGIN"), ep.conn.execute("COMMIT"))),
        ("ep.changed(table, pk) in a transaction", lambda i: _in_txn(ep, lambda: ep.changed("x", i))),
        ("ep.next_id(orders) in a transaction", lambda i: _in_txn(ep, lambda: ep.next_id(order_info))),
        ("customers.decode(row)", lambda i: customers.decode(raw_row)),
        ("products.decode(row) (json tags)", lambda i: products.decode(product_raw)),
        (
            "encode every customers column",
            lambda i: [customers.encode(c, decoded[c]) for c in customers.columns],
        ),
        (
            "encode orders.created_at (datetime check)",
            lambda i: order_info.encode("created_at", "2026-01-01T09:00:00Z"),
        ),
        (
            "raw PK SELECT customers",
            lambda i: ep.conn.execute(customers.select_by_pk, {"pk": ids.customers[0]}).fetchone(),
        ),
    ]
    table = Table(title="components: median us", title_justify="left")
    table.add_column("operation")
    table.add_column("median us", justify="right")
    for label, fn in items:
        table.add_row(label, f"{measure(fn, reps=reps).median_us:.2f}")
    ep.close()
    return table


def _in_txn(ep: Episode, fn: Callable[[], Any]) -> Any:
    ep.conn.execute("BEGIN")
    try:
        return fn()
    finally:
        ep.conn.execute("ROLLBACK")
        ep._forget_pending()


def step_table(domain: Domain, ids: ShopIds, calls: int) -> Table:
    """Each step kind's share of a write call: every runnable step class's `run` (and its own `run_unread`,
    what runs a step whose value nothing reads), timed."""
    from simulator.plan import readsteps, writesteps
    from simulator.plan import runsteps as steps

    kinds = [readsteps.GetRun, writesteps.CreateRun, writesteps.UpdateRun, steps.RequireRun, steps.LetRun]
    kinds += [steps.ForEachRun, steps.ReturnRun]
    times: dict[str, list[int]] = defaultdict(list)
    originals = {(cls, m): getattr(cls, m) for cls in kinds for m in ("run", "run_unread") if m in vars(cls)}

    def timed(cls: type[steps.Run], method: str) -> Callable[..., Any]:
        run = originals[cls, method]

        def wrapper(self: steps.Run, rt: Any, env: Any) -> Any:
            t0 = time.perf_counter_ns()
            try:
                return run(self, rt, env)
            finally:
                times[cls.__name__].append(time.perf_counter_ns() - t0)

        return wrapper

    orders, cs = order_arguments(ids), ids.customers
    tools: dict[str, Callable[[Episode, int], Any]] = {
        "place_order": lambda ep, i: ep.call("place_order", orders[i % len(orders)]),
        "transfer_credit": lambda ep, i: ep.call(
            "transfer_credit",
            {
                "from_customer_id": cs[i % len(cs)],
                "to_customer_id": cs[(i * 7 + 3) % len(cs)],
                "amount": 0.01,
            },
        ),
    }
    table = Table(title="steps of one write call: calls per call x median us", title_justify="left")
    for col in ("tool", "step", "per call", "median us", "us per call"):
        table.add_column(col, justify="left" if col in ("tool", "step") else "right")
    for cls, method in originals:
        setattr(cls, method, timed(cls, method))
    for tool in domain.tools.values():  # (steps' methods are bound when a body is made)
        tool.call_every_step()  # (the generated body writes most steps out: time them called)
    try:
        for tool, fn in tools.items():
            with domain.episode() as ep:
                for i in range(200):
                    fn(ep, i)
                times.clear()
                total = measure(lambda i, fn=fn, ep=ep: fn(ep, i + 200), reps=calls, warmup=0, max_seconds=30)
            for name, spent in sorted(times.items()):
                per, med = len(spent) / total.n, sorted(spent)[len(spent) // 2] / 1000
                table.add_row(tool, name, f"{per:.1f}", f"{med:.2f}", f"{per * med:.1f}")
            table.add_row(tool, "whole call (median)", "", "", f"{total.median_us:.1f}")
            table.add_section()
    finally:
        for (cls, method), run in originals.items():
            setattr(cls, method, run)
        _forget_bodies(domain)
    return table


def _forget_bodies(domain: Domain) -> None:
    """Drop every generated step body of the domain's tools (made again on their next run)."""
    stack: list[Any] = []
    for tool in domain.tools.values():
        tool._body = None
        stack.extend(tool.steps)
    while stack:
        step = stack.pop()
        if hasattr(step, "_body"):
            step._body = None
        stack.extend(getattr(step, "steps", None) or [])
        if getattr(step, "inner", None) is not None:
            stack.append(step.inner)


def _clock(domain: Domain, i: int) -> str:
    return domain.clock_text(100_000 + i)  # (past the tick counts kept: computed each time)


def _render(domain: Domain, i: int) -> str:
    return domain.render_time(domain.clock_start + timedelta(seconds=i * domain.spec.clock.tick_seconds))


def _save(ep: Episode, i: int) -> None:
    """What `digest`/`changes`/`close` write for one place_order call (6 log rows, 2 counters)."""
    ep._unsaved_changes.update(
        [("orders", f"O-{i}"), ("customers", "C-1"), ("products", "P-1"), ("products", "P-2")]
    )
    ep._unsaved_changes.update([("order_items", 2 * i), ("order_items", 2 * i + 1)])
    ep._unsaved_meta.update({"ticks": i, "id:orders": i})
    ep._save()


def cprofile(domain: Domain, ids: ShopIds, kind: str, calls: int, top: int) -> None:
    orders = order_arguments(ids)
    customers = [{"customer_id": c} for c in ids.customers]
    ep = domain.episode()
    for i in range(100):
        ep.call("place_order", orders[i % len(orders)]) if kind == "write" else ep.call(
            "get_customer", customers[i % len(customers)]
        )
    prof = cProfile.Profile()
    prof.enable()
    for i in range(calls):
        if kind == "write":
            ep.call("place_order", orders[i % len(orders)])
        else:
            ep.call("get_customer", customers[i % len(customers)])
    prof.disable()
    ep.close()
    print(f"\ncProfile: {calls} {kind} calls, top {top} by own time")
    pstats.Stats(prof).sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000, help="seed rows of the benchmark shop")
    parser.add_argument("--reps", type=int, default=REPS, help="timed repetitions per measurement")
    parser.add_argument("--cprofile", action="store_true", help="also print cProfile's top functions")
    parser.add_argument("--top", type=int, default=30, help="functions shown by --cprofile")
    args = parser.parse_args(argv)
    console = Console()
    with tempfile.TemporaryDirectory(prefix="toolgym-prof-") as tmp:
        domain, ids = load_shop(Path(tmp), args.rows)
        console.print(f"[bold]benchmark shop, {args.rows:,} seed rows[/bold]")
        console.print(ablation_table(domain, ids, args.reps))
        console.print(sql_variants_table(domain, ids, args.reps))
        console.print(statement_table(domain, ids, "read", args.reps))
        console.print(statement_table(domain, ids, "write", args.reps))
        console.print(step_table(domain, ids, args.reps))
        console.print(component_table(domain, ids, args.reps))
        if args.cprofile:
            cprofile(domain, ids, "read", args.reps * 3, args.top)
            cprofile(domain, ids, "write", args.reps, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
