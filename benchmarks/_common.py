"""Shared pieces of the benchmark suites: a scaled domain, a timer, result rows, output.

Every suite (`core.py`, and later ones) is a script that measures something against a raw-SQLite
baseline run in the same process, prints a table and writes a JSON report:

    {"suite": "core",
     "meta": {...},                       # python / sqlite versions, platform, load, options
     "results": [{"name", "rows", "median_us", "baseline", "baseline_median_us", "ratio"}],
     "targets": [{"name", "rows", "metric", "limit", "value", "ok"}]}

`ratio` is `median_us / baseline_median_us` (null when a row has no baseline). `targets` states
the goals the suite checks (metric `median_us` or `ratio`, `ok` when `value <= limit`).

The pieces:

- `write_shop_domain(folder, rows)` writes a domain folder (the test shop's four related tables and
  tools) whose seed holds `rows` rows in total, generated deterministically from `random.Random`.
  `seed_connection(domain)` opens a raw sqlite3 copy of a domain's seed snapshot for baselines.
- `measure(fn, ...)` times `fn(i)` for i = 0, 1, ... with `time.perf_counter_ns`: a warm-up, then
  many repetitions (bounded by a time budget), and reports the median. `measure_pair` interleaves
  a subject and its baseline in rounds so that machine noise hits both alike.
- `result_row`, `Target`, `print_results`, `write_report` build, show and save the report.
- `shop_suite_main(suite, __doc__, bench_size, TARGETS, argv, ...)` is the whole command line of a
  suite timed on the shop at several seed sizes (`core.py`, `score.py`).

Run suites as scripts (`python benchmarks/core.py --json out.json`); they import this module as
`_common` because the script's folder is first on `sys.path`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # runnable from a checkout without `pip install -e .`
    sys.path.insert(0, str(ROOT))

from simulator import Domain, load_domain  # noqa: E402

# ---------------------------------------------------------------------------------------------
# the scaled benchmark domain

#: The benchmark shop: the tables and tools of tests/fixtures/shop/domain.yaml (copied here so
#: that edits to the test fixture never change what the benchmarks measure).
SHOP_YAML = """\
name: bench_shop
version: 1.0.0
description: The test shop, scaled up for benchmarks.
policy: Be helpful.
clock: {start: "2026-01-01T09:00:00Z", tick_seconds: 60}
tables:
  customers:
    primary_key: customer_id
    id_prefix: "C-"
    columns:
      customer_id: {type: string}
      name: {type: string}
      email: {type: string, unique: true}
      vip: {type: boolean, default: false}
      balance: {type: number, default: 0}
      notes: {type: string, nullable: true}
  products:
    primary_key: sku
    columns:
      sku: {type: string}
      title: {type: string}
      price: {type: number}
      stock: {type: integer}
      tags: {type: json, default: []}
  orders:
    primary_key: order_id
    id_prefix: "O-"
    columns:
      order_id: {type: string}
      customer_id: {type: string, references: customers.customer_id}
      status: {type: string, enum: [pending, shipped, cancelled], default: pending}
      total: {type: number}
      created_at: {type: datetime, default: $now}
  order_items:
    primary_key: id
    columns:
      id: {type: integer}
      order_id: {type: string, references: orders.order_id}
      sku: {type: string, references: products.sku}
      quantity: {type: integer}
      price: {type: number}
tools:
  - name: get_customer
    description: Look up a customer.
    kind: read
    input_schema:
      type: object
      properties: {customer_id: {type: string}}
      required: [customer_id]
      additionalProperties: false
    operation:
      get: customers
      key: {customer_id: $args.customer_id}
      error: "No customer {args.customer_id}."
  - name: search_products
    description: Search products by title.
    kind: read
    input_schema:
      type: object
      properties:
        query: {type: string}
        max_price: {type: number}
        limit: {type: integer, minimum: 1}
      additionalProperties: false
    operation:
      list: products
      where:
        - {column: title, op: icontains, value: $args.query}
        - {column: price, op: le, value: $args.max_price}
      order_by: [price]
      limit: $args.limit
      max_limit: 5
  - name: add_customer
    description: Add a customer.
    kind: write
    input_schema:
      type: object
      properties: {name: {type: string}, email: {type: string}, notes: {type: string}}
      required: [name, email]
      additionalProperties: false
    operation:
      create: customers
      values: {name: $args.name, email: $args.email, notes: $args.notes}
  - name: place_order
    description: Place an order for one or more products, paid from the customer's balance.
    kind: write
    input_schema:
      type: object
      properties:
        customer_id: {type: string}
        items:
          type: array
          minItems: 1
          items:
            type: object
            properties: {sku: {type: string}, quantity: {type: integer, minimum: 1}}
            required: [sku, quantity]
      required: [customer_id, items]
      additionalProperties: false
    operation:
      - get: customers
        key: {customer_id: $args.customer_id}
        as: customer
        error: "No customer {args.customer_id}."
      - let: total
        value: 0
      - create: orders
        values: {customer_id: $customer.customer_id, total: 0}
        as: order
      - for_each: $args.items
        as: item
        steps:
          - get: products
            key: {sku: $item.sku}
            as: product
            error: "No product {item.sku}."
          - require: {ge: [$product.stock, $item.quantity]}
            error: "Only {product.stock} of {product.sku} left."
          - update: products
            key: {sku: $product.sku}
            set: {stock: {sub: [$row.stock, $item.quantity]}}
          - create: order_items
            values: {order_id: $order.order_id, sku: $product.sku, quantity: $item.quantity, price: $product.price}
          - let: total
            value: {round: [{add: [$total, {mul: [$product.price, $item.quantity]}]}, 2]}
      - require: {ge: [$customer.balance, $total]}
        error: "Balance {customer.balance} does not cover {total}."
      - update: customers
        key: {customer_id: $customer.customer_id}
        set: {balance: {round: [{sub: [$row.balance, $total]}, 2]}}
      - update: orders
        key: {order_id: $order.order_id}
        set: {total: $total}
        as: order
      - return: {merge: [$order, {object: {items: {len: $args.items}}}]}
  - name: cancel_order
    description: Cancel a pending order and refund it.
    kind: write
    input_schema:
      type: object
      properties: {order_id: {type: string}}
      required: [order_id]
      additionalProperties: false
    operation:
      - get: orders
        key: {order_id: $args.order_id}
        as: order
      - require: {eq: [$order.status, pending]}
        error: "Order {order.order_id} is {order.status}; only pending orders can be cancelled."
      - update: orders
        key: {order_id: $order.order_id}
        set: {status: cancelled}
        as: order
      - update: customers
        key: {customer_id: $order.customer_id}
        set: {balance: {round: [{add: [$row.balance, $order.total]}, 2]}}
      - return: $order
  - name: set_note
    description: Set a customer's note (any text).
    kind: write
    input_schema:
      type: object
      properties: {customer_id: {type: string}, notes: {type: string}}
      required: [customer_id, notes]
      additionalProperties: false
    operation:
      update: customers
      key: {customer_id: $args.customer_id}
      set: {notes: $args.notes}
  - name: transfer_credit
    description: Move store credit from one customer to another (a five-step write).
    kind: write
    input_schema:
      type: object
      properties:
        from_customer_id: {type: string}
        to_customer_id: {type: string}
        amount: {type: number, exclusiveMinimum: 0}
      required: [from_customer_id, to_customer_id, amount]
      additionalProperties: false
    operation:
      - get: customers
        key: {customer_id: $args.from_customer_id}
        as: source
      - get: customers
        key: {customer_id: $args.to_customer_id}
        as: target
      - require: {ge: [$source.balance, $args.amount]}
        error: "Balance {source.balance:.2f} does not cover {args.amount:.2f}."
      - update: customers
        key: {customer_id: $source.customer_id}
        set: {balance: {round: [{sub: [$row.balance, $args.amount]}, 2]}}
      - update: customers
        key: {customer_id: $target.customer_id}
        set: {balance: {round: [{add: [$row.balance, $args.amount]}, 2]}}
"""

#: How the seed rows are split over the tables (fractions of the total).
SHOP_SHARES = {"customers": 0.2, "products": 0.1, "orders": 0.3, "order_items": 0.4}

_WORDS = ["blue", "red", "green", "oak", "steel", "linen", "mini", "large", "smart", "classic", "travel"]
_THINGS = ["mug", "lamp", "desk", "chair", "kettle", "shelf", "pillow", "bottle", "clock", "rug", "pen"]
_FIRST = ["Ada", "Alan", "Grace", "Edsger", "Barbara", "Ken", "Donald", "Frances", "John", "Radia"]
_LAST = ["Lovelace", "Turing", "Hopper", "Dijkstra", "Liskov", "Thompson", "Knuth", "Allen", "Backus"]


@dataclass(frozen=True)
class ShopIds:
    """The keys of a generated shop, for building call arguments."""

    customers: list[str]
    skus: list[str]
    orders: list[str]


def shop_counts(rows: int) -> dict[str, int]:
    """Rows per table for a shop of `rows` rows in total (every table gets at least one row)."""
    counts = {t: max(1, int(rows * share)) for t, share in SHOP_SHARES.items()}
    counts["order_items"] += rows - sum(counts.values())  # the rounding remainder
    return counts


def shop_ids(rows: int) -> ShopIds:
    """The keys `write_shop_domain(_, rows)` generates (cheap: no file is read)."""
    n = shop_counts(rows)
    return ShopIds(
        customers=[f"C-{i:06d}" for i in range(1, n["customers"] + 1)],
        skus=[f"SKU-{i:06d}" for i in range(1, n["products"] + 1)],
        orders=[f"O-{i:07d}" for i in range(1, n["orders"] + 1)],
    )


def write_shop_domain(folder: Path, rows: int, seed: int = 0) -> Path:
    """Write the benchmark shop with `rows` seed rows in total into `folder`; returns `folder`.

    Customers have large balances and products large stock, so write benchmarks can place
    orders many thousands of times on one episode without a precondition failing.
    The same (rows, seed) always writes byte-identical files.
    """
    rng = random.Random(f"bench_shop:{rows}:{seed}")
    ids = shop_ids(rows)
    n = shop_counts(rows)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "domain.yaml").write_text(SHOP_YAML, encoding="utf-8")
    seed_dir = folder / "seed"
    seed_dir.mkdir(exist_ok=True)

    customers = [
        {
            "customer_id": cid,
            "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
            "email": f"c{i}@example.com",
            "vip": rng.random() < 0.1,
            "balance": float(rng.randint(1_000_000, 9_000_000)),
            "notes": None if rng.random() < 0.8 else f"note {i}",
        }
        for i, cid in enumerate(ids.customers, start=1)
    ]
    products = [
        {
            "sku": sku,
            "title": f"{rng.choice(_WORDS).title()} {rng.choice(_THINGS)} {i}",
            "price": round(rng.uniform(1, 200), 2),
            "stock": rng.randint(1_000_000, 9_000_000),
            "tags": rng.sample(_WORDS, rng.randint(0, 3)),
        }
        for i, sku in enumerate(ids.skus, start=1)
    ]
    prices = {p["sku"]: p["price"] for p in products}
    orders = [
        {
            "order_id": oid,
            "customer_id": rng.choice(ids.customers),
            "status": rng.choice(["pending", "shipped", "shipped", "cancelled"]),
            "total": 0.0,
            "created_at": f"2025-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:00Z",
        }
        for i, oid in enumerate(ids.orders)
    ]
    items = []
    for i in range(1, n["order_items"] + 1):
        order = orders[(i - 1) % len(orders)] if i <= len(orders) else rng.choice(orders)
        sku = rng.choice(ids.skus)
        quantity = rng.randint(1, 4)
        items.append(
            {"id": i, "order_id": order["order_id"], "sku": sku, "quantity": quantity, "price": prices[sku]}
        )
        order["total"] = round(order["total"] + prices[sku] * quantity, 2)

    for table, data in (
        ("customers", customers),
        ("products", products),
        ("orders", orders),
        ("order_items", items),
    ):
        text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in data)
        (seed_dir / f"{table}.jsonl").write_text(text, encoding="utf-8")
    return folder


def load_shop(workdir: Path, rows: int, seed: int = 0) -> tuple[Domain, ShopIds]:
    """Write the benchmark shop under `workdir/shop_<rows>`, load it and build its seed snapshot."""
    folder = write_shop_domain(workdir / f"shop_{rows}", rows, seed)
    domain = load_domain(folder)
    domain.snapshot()
    return domain, shop_ids(rows)


def seed_connection(domain: Domain, foreign_keys: bool = True) -> sqlite3.Connection:
    """A raw sqlite3 in-memory copy of the domain's seed snapshot (autocommit, like an episode's)."""
    conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
    conn.deserialize(domain.snapshot())
    if foreign_keys:
        conn.execute("PRAGMA foreign_keys=ON")
    return conn


# ---------------------------------------------------------------------------------------------
# timing


@dataclass(frozen=True)
class Timing:
    """Per-call times of one measured operation, in microseconds."""

    samples_us: list[float] = field(repr=False)

    @property
    def n(self) -> int:
        return len(self.samples_us)

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples_us)

    def quantile_us(self, q: float) -> float:
        ordered = sorted(self.samples_us)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _run(
    fn: Callable[[int], Any],
    start: int,
    count: int,
    teardown: Callable[[Any], None] | None,
    out: list[float] | None,
    deadline_ns: float = float("inf"),
    at_least: int = 0,
) -> int:
    """Call fn(start), fn(start+1), ... up to `count` times, appending each call's microseconds to
    `out`; stop early once past `deadline_ns` if `at_least` calls were made. Returns the next i."""
    clock = time.perf_counter_ns
    i = start
    for n, i in enumerate(range(start, start + count), start=1):
        t0 = clock()
        value = fn(i)
        t1 = clock()
        if out is not None:
            out.append((t1 - t0) / 1000)
        if teardown is not None:
            teardown(value)
        if t1 > deadline_ns and n >= at_least:
            return i + 1
    return i + 1 if count else start


def measure(
    fn: Callable[[int], Any],
    *,
    reps: int = 2000,
    warmup: int = 50,
    max_seconds: float = 5.0,
    min_reps: int = 10,
    teardown: Callable[[Any], None] | None = None,
) -> Timing:
    """Time `fn(i)` for i = 0, 1, 2, ... and return the per-call times.

    `warmup` calls run first, untimed. Then up to `reps` calls are timed one by one with
    `time.perf_counter_ns`, stopping early once `max_seconds` have passed (but never before
    `min_reps` timed calls). `teardown(result)` runs after each call, untimed (e.g. to close an
    episode). The garbage collector is paused while timing, as `timeit` does. `i` keeps counting
    through warm-up, so a caller can derive varying arguments from it.
    """
    timing, _ = measure_pair(
        fn, None, reps=reps, warmup=warmup, max_seconds=max_seconds, min_reps=min_reps, teardown=teardown
    )
    return timing


def measure_pair(
    subject: Callable[[int], Any],
    baseline: Callable[[int], Any] | None,
    *,
    teardown: Callable[[Any], None] | None = None,
    baseline_teardown: Callable[[Any], None] | None = None,
    **options: Any,
) -> tuple[Timing, Timing | None]:
    """Time a subject and its baseline together (see `measure_interleaved`)."""
    if baseline is None:
        (timing,) = measure_interleaved([subject], teardowns=[teardown], **options)
        return timing, None
    timing, base = measure_interleaved(
        [subject, baseline], teardowns=[teardown, baseline_teardown], **options
    )
    return timing, base


def measure_interleaved(
    fns: list[Callable[[int], Any]],
    *,
    teardowns: list[Callable[[Any], None] | None] | None = None,
    reps: int = 2000,
    warmup: int = 50,
    max_seconds: float = 5.0,
    min_reps: int = 10,
    rounds: int = 10,
) -> list[Timing]:
    """Time several operations like `measure`, alternating between them in `rounds` chunks.

    Interleaving means a burst of machine noise lands on every side rather than on one, so
    their ratios are steadier. `max_seconds` is the budget for all of them, split evenly.
    """
    downs = teardowns or [None] * len(fns)
    outs: list[list[float]] = [[] for _ in fns]
    nexts = [_run(fn, 0, warmup, down, None) for fn, down in zip(fns, downs, strict=True)]
    rounds = max(1, min(rounds, reps))
    per_round = -(-reps // rounds)
    at_least = -(-min_reps // rounds)
    slice_ns = max_seconds * 1e9 / (rounds * len(fns))
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(rounds):
            for k, (fn, down, out) in enumerate(zip(fns, downs, outs, strict=True)):
                count = min(per_round, reps - len(out))
                deadline = time.perf_counter_ns() + slice_ns
                nexts[k] = _run(fn, nexts[k], count, down, out, deadline, at_least)
    finally:
        if enabled:
            gc.enable()
    return [Timing(out) for out in outs]


# ---------------------------------------------------------------------------------------------
# results and output


def result_row(
    name: str,
    rows: int,
    median_us: float,
    baseline: str | None = None,
    baseline_median_us: float | None = None,
) -> dict[str, Any]:
    """One entry of a report's `results` (times rounded to 0.01 us, ratio to 4 significant digits)."""
    ratio = None
    if baseline_median_us:
        ratio = float(f"{median_us / baseline_median_us:.4g}")  # 4 significant digits
    return {
        "name": name,
        "rows": rows,
        "median_us": round(median_us, 2),
        "baseline": baseline,
        "baseline_median_us": None if baseline_median_us is None else round(baseline_median_us, 2),
        "ratio": ratio,
    }


@dataclass(frozen=True)
class Target:
    """A goal: the `metric` (`median_us` or `ratio`) of result `name` must be <= `limit` at every size."""

    name: str
    metric: str
    limit: float
    text: str = ""

    def check(self, results: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for row in results:
            if row["name"] != self.name or row.get(self.metric) is None:
                continue
            value = row[self.metric]
            out.append(
                {
                    "name": self.name,
                    "rows": row["rows"],
                    "metric": self.metric,
                    "limit": self.limit,
                    "value": value,
                    "ok": value <= self.limit,
                }
            )
        return out


def environment() -> dict[str, Any]:
    """What the numbers depend on: interpreter, SQLite, machine."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        # other work on the machine skews absolute times (ratios much less): note it
        "load_average_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
    }


def build_report(
    suite: str, results: list[dict[str, Any]], targets: Iterable[Target] = (), **meta: Any
) -> dict[str, Any]:
    checks = [c for t in targets for c in t.check(results)]
    return {"suite": suite, "meta": {**environment(), **meta}, "results": results, "targets": checks}


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "x":
        return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"
    return f"{value:,.1f}" if value < 10_000 else f"{value:,.0f}"


def print_results(report: dict[str, Any], title: str | None = None) -> None:
    """Print a report's results (and its targets) as rich tables."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    if not console.is_terminal:  # piped or captured: do not wrap at 80 columns
        console.width = 120
    table = Table(title=title or f"benchmark suite: {report['suite']}", title_justify="left")
    for header, justify in (
        ("name", "left"),
        ("rows", "right"),
        ("median us", "right"),
        ("baseline", "left"),
        ("baseline us", "right"),
        ("ratio", "right"),
    ):
        table.add_column(header, justify=justify)  # type: ignore[arg-type]
    last_rows = None
    for row in report["results"]:
        if last_rows is not None and row["rows"] != last_rows:
            table.add_section()
        last_rows = row["rows"]
        table.add_row(
            row["name"],
            f"{row['rows']:,}",
            _fmt(row["median_us"]),
            row["baseline"] or "-",
            _fmt(row["baseline_median_us"]),
            _fmt(row["ratio"], "x"),
        )
    console.print(table)
    if report.get("targets"):
        checks = Table(title="targets", title_justify="left")
        for header in ("name", "rows", "metric", "value", "limit", "ok"):
            checks.add_column(header)
        for c in report["targets"]:
            value = _fmt(c["value"], "x" if c["metric"] == "ratio" else "")
            limit = _fmt(c["limit"], "x" if c["metric"] == "ratio" else "")
            ok = "[green]ok[/green]" if c["ok"] else "[red]MISSED[/red]"
            checks.add_row(c["name"], f"{c['rows']:,}", c["metric"], value, limit, ok)
        console.print(checks)


def write_report(report: dict[str, Any], path: str | Path) -> Path:
    """Write a report as indented JSON (creating parent folders)."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return out


#: Seed sizes a shop suite runs at unless told otherwise (`--quick` runs only the first).
SHOP_SIZES = (1_000, 10_000, 100_000)

#: `bench_size(domain, ids, rows, reps, seconds, warmup)`: one size's result rows.
BenchSize = Callable[[Domain, ShopIds, int, int, float, int], list[dict[str, Any]]]


def shop_suite_main(
    suite: str,
    doc: str | None,
    bench_size: BenchSize,
    targets: Iterable[Target],
    argv: list[str] | None,
    *,
    reps: int,
    quick_reps: int,
    warmup: int,
    quick_warmup: int,
    **meta: Any,
) -> int:
    """The command line of a suite timed on the benchmark shop at several seed sizes.

    Parses --json, --quick, --sizes, --reps, --seconds and --check; runs `bench_size` on a freshly
    written shop of each size, prints the report and writes it. Returns the exit code: 1 when
    --check is given and a target is missed. `meta` is added to the report's meta.
    """
    parser = argparse.ArgumentParser(description=(doc or "").split("\n\n")[0])
    parser.add_argument("--json", metavar="PATH", help="write the report as JSON here")
    parser.add_argument("--quick", action="store_true", help="1k rows only, few repetitions (smoke test)")
    parser.add_argument("--sizes", help="comma-separated seed row counts (default 1000,10000,100000)")
    parser.add_argument(
        "--reps", type=int, help=f"timed repetitions per operation (default {reps}; quick {quick_reps})"
    )
    parser.add_argument(
        "--seconds", type=float, help="time budget per operation pair, seconds (default 4; quick 0.5)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args(argv)

    sizes = (
        [int(s) for s in args.sizes.split(",")]
        if args.sizes
        else (SHOP_SIZES[:1] if args.quick else SHOP_SIZES)
    )
    reps = args.reps or (quick_reps if args.quick else reps)
    seconds = args.seconds or (0.5 if args.quick else 4.0)
    warmup = quick_warmup if args.quick else warmup

    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="toolgym-bench-") as tmp:
        for rows in sizes:
            print(f"{suite}: {rows:,} rows ...", file=sys.stderr, flush=True)
            domain, ids = load_shop(Path(tmp), rows)
            results.extend(bench_size(domain, ids, rows, reps, seconds, warmup))
            del domain
    report = build_report(suite, results, targets, quick=args.quick, reps=reps, seconds=seconds, **meta)
    print_results(report)
    if args.json:
        write_report(report, args.json)
    missed = [t for t in report["targets"] if not t["ok"]]
    return 1 if args.check and missed else 0
