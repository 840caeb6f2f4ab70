"""The agreement check: replay every gold call through toolgym and compare with tau2's own run."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .export import export_tau2
from .source import DEFAULT_OUT, DEFAULT_SOURCE, REPO, load_expected


def _as_data(output: Any) -> Any:
    """tau2's tool output (a string) as data: JSON when it parses, else the string itself."""
    if isinstance(output, str):
        try:
            return json.loads(output)
        except json.JSONDecodeError:
            return output
    return output


def _as_text(result: Any) -> str:
    """A toolgym result as tau2 would print it: a string as is, anything else as `json.dumps`."""
    return result if isinstance(result, str) else json.dumps(result)


def _field_diff(want: Any, got: Any, path: str = "") -> list[str]:
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for k in list(want) + [k for k in got if k not in want]:
            out += _field_diff(
                want.get(k, "<absent>"), got.get(k, "<absent>"), f"{path}.{k}" if path else str(k)
            )
        return out
    if isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        out = []
        for i, (w, g) in enumerate(zip(want, got, strict=True)):
            out += _field_diff(w, g, f"{path}[{i}]")
        return out
    return (
        [] if want == got else [f"{path}: tau2 {json.dumps(want)[:120]} != toolgym {json.dumps(got)[:120]}"]
    )


#: table -> how its rows belong to tau2's top-level records: (record table, function of the row -> key)
_OWNER = {
    "users": ("users", lambda r: r["user_id"]),
    "payment_methods": ("users", lambda r: r["user_id"]),
    "orders": ("orders", lambda r: r["order_id"]),
    "order_items": ("orders", lambda r: r["order_id"]),
    "fulfillments": ("orders", lambda r: r["order_id"]),
    "payment_history": ("orders", lambda r: r["order_id"]),
    "products": ("products", lambda r: r["product_id"]),
    "variants": ("products", lambda r: r["product_id"]),
    "addresses": (None, lambda r: r["address_id"]),  # 'user:<id>' or 'order:<id>'
}


class _Seed:
    """The seed tables, indexed by primary key, with tau2's view of them (built once per check)."""

    def __init__(self, domain: Any, tables: dict[str, list[dict[str, Any]]]):
        self.pks = {name: info.pk for name, info in domain.tables.items()}
        self.rows = {t: {r[self.pks[t]]: r for r in rows} for t, rows in tables.items()}
        self.tau2 = export_tau2(tables)

    def changes(self, episode: Any) -> dict[str, dict[str, Any]]:
        """tau2's `changes` for an episode: every users/orders/products record whose value differs from
        the seed's, with its final value (None = deleted). Only records owning a changed row are built."""
        current = {t: dict(rows) for t, rows in self.rows.items()}
        owners: dict[str, set[str]] = {"users": set(), "orders": set(), "products": set()}
        for table, pk in episode.changes():
            if table not in _OWNER:
                continue  # handoffs: not part of tau2's state
            after = episode.row(table, pk)
            for row in (self.rows[table].get(pk), after):
                if row is None:
                    continue
                owner, key_of = _OWNER[table]
                key = key_of(row)
                if owner is None:  # an address: 'user:<id>' or 'order:<id>'
                    kind, _, key = key.partition(":")
                    owner = kind + "s"
                owners[owner].add(key)
                if table == "orders":
                    owners["users"].add(row["user_id"])  # the user's `orders` list
            if after is None:
                current[table].pop(pk, None)
            else:
                current[table][pk] = after
        users, orders, products = owners["users"], owners["orders"], owners["products"]
        orders_all = orders | {r["order_id"] for r in current["orders"].values() if r["user_id"] in users}
        keep = {
            "users": lambda r: r["user_id"] in users,
            "payment_methods": lambda r: r["user_id"] in users,
            "orders": lambda r: r["order_id"] in orders_all,
            "order_items": lambda r: r["order_id"] in orders,
            "fulfillments": lambda r: r["order_id"] in orders,
            "payment_history": lambda r: r["order_id"] in orders,
            "products": lambda r: r["product_id"] in products,
            "variants": lambda r: r["product_id"] in products,
            "addresses": lambda r: True,
        }
        subset = {t: [r for r in current[t].values() if keep[t](r)] for t in _OWNER}
        final = export_tau2(subset)
        out: dict[str, dict[str, Any]] = {}
        for table, keys in (("users", users), ("orders", orders), ("products", products)):
            for key in keys:
                value = final[table].get(key)
                if value != self.tau2[table].get(key):
                    out.setdefault(table, {})[key] = value
        return out


@dataclass
class Agreement:
    """What `check_agreement` found (counts over tau2's gold calls and tasks)."""

    tasks: int = 0
    state_ok: int = 0
    calls: int = 0
    error_flag_ok: int = 0  # the call fails here exactly when it fails in tau2
    errors: int = 0  # calls that fail in tau2
    error_text_ok: int = 0  # of those, "Error: " + toolgym's message == tau2's output
    outputs: int = 0  # calls that succeed on both sides
    outputs_data_ok: int = 0  # result == tau2's output read as JSON (a string result: == the text)
    outputs_text_ok: int = 0  # tau2's output text == the result printed as tau2 prints (json.dumps)
    by_tool: dict[str, list[int]] = field(default_factory=dict)  # name -> [calls, flag ok, outputs, data ok]
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every task's state, every call's success or error, and every error text agree."""
        return (
            self.state_ok == self.tasks
            and self.error_flag_ok == self.calls
            and self.error_text_ok == self.errors
        )

    def add_call(self, where: str, gold: dict[str, Any], result: Any, msg: str | None, verbose: bool) -> None:
        """Compare one call's outcome here (`msg` is the error message, None on success) with tau2's."""
        err = msg is not None
        self.calls += 1
        stat = self.by_tool.setdefault(gold["name"], [0, 0, 0, 0])
        stat[0] += 1
        if err == gold["error"]:
            self.error_flag_ok += 1
            stat[1] += 1
        else:
            self.failures.append(
                f"{where}: tau2 error={gold['error']} ({gold['output'][:80]}), toolgym error={err} ({msg})"
            )
        if gold["error"]:
            self.errors += 1
            if err and f"Error: {msg}" == gold["output"]:
                self.error_text_ok += 1
            elif err and verbose:
                self.failures.append(f"{where} error text: tau2 {gold['output']!r}, toolgym {msg!r}")
        elif not err:
            self.outputs += 1
            stat[2] += 1
            data = result == (gold["output"] if isinstance(result, str) else _as_data(gold["output"]))
            if data:
                self.outputs_data_ok += 1
                stat[3] += 1
            if _as_text(result) == gold["output"]:
                self.outputs_text_ok += 1
            elif verbose:
                diffs = _field_diff(_as_data(gold["output"]), result) if not data else []
                self.failures.append(
                    f"{where} output differs {'as text only' if data else 'as data'}: "
                    f"{'; '.join(diffs[:3]) or repr(gold['output'][:80]) + ' vs ' + repr(_as_text(result)[:80])}"
                )

    def add_state(self, task_id: str, want: dict[str, Any], got: dict[str, Any]) -> None:
        """Compare one task's changed records (tau2's `changes`) with those of the toolgym episode."""
        self.tasks += 1
        if got == want:
            self.state_ok += 1
        else:
            diffs = _field_diff(want, got)
            self.failures.append(f"task {task_id} state differs: {'; '.join(diffs[:4])}")

    def report(self) -> str:
        """The failures, a table per tool and the totals, as `agree` prints them."""
        lines = [*self.failures, "", f"{'tool':34} calls  error-agree  outputs-compared  outputs-agree"]
        for name, (c, e, r, o) in sorted(self.by_tool.items()):
            lines.append(f"{name:34} {c:5}  {e:11}  {r:16}  {o:13}")
        n = self.outputs
        lines += [
            f"\nstate agreement: {self.state_ok}/{self.tasks} tasks",
            f"error agreement: {self.error_flag_ok}/{self.calls} gold calls",
            f"error text agreement (calls that fail in tau2): {self.error_text_ok}/{self.errors}",
            f"output agreement as data (calls that succeed on both sides): {self.outputs_data_ok}/{n}",
            f"output agreement as text (json.dumps of the result == tau2's output): {self.outputs_text_ok}/{n}",
        ]
        return "\n".join(lines)


def check_agreement(
    source: Path = DEFAULT_SOURCE,
    out: Path = DEFAULT_OUT,
    only: list[str] | None = None,
    verbose: bool = False,
) -> Agreement:
    """Replay every task's gold calls in toolgym and compare with tau2's own run (expected.jsonl)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from simulator import ToolError, load_domain  # noqa: PLC0415 - the core is optional for `build`

    domain = load_domain(out)
    with domain.episode(seed=0) as start:
        seed = _Seed(domain, start.export())
    res = Agreement()
    for rec in load_expected(source):
        tid = rec["task_id"]
        if only and tid not in only:
            continue
        with domain.episode(seed=0) as ep:
            for i, gold in enumerate(rec["gold_calls"]):
                try:
                    result, msg = ep.call(gold["name"], gold["arguments"]), None
                except ToolError as exc:
                    result, msg = None, str(exc)
                res.add_call(f"task {tid} call {i} {gold['name']}", gold, result, msg, verbose)
            got = seed.changes(ep)
        res.add_state(tid, rec["changes"], got)
    return res
