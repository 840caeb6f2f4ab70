"""The exporter: seed tables -> tau2's nested shape (used by the build's self-check and the agreement check)."""

from __future__ import annotations

import copy
from typing import Any

from .tables import ADDRESS_FIELDS, ORDER_OPTIONAL, PM_FIELDS


def export_tau2(tables: dict[str, list[dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Rows per table -> {"users": {...}, "orders": {...}, "products": {...}} as tau2's models dump them."""

    def by(table: str, key: str) -> dict[Any, list[dict[str, Any]]]:
        groups: dict[Any, list[dict[str, Any]]] = {}
        for r in tables.get(table, []):
            groups.setdefault(r[key], []).append(r)
        for rows in groups.values():
            rows.sort(key=lambda r: r.get("position", r.get("user_position", 0)))
        return groups

    addresses = {r["address_id"]: {f: r[f] for f in ADDRESS_FIELDS} for r in tables["addresses"]}
    pms = by("payment_methods", "user_id")
    user_orders: dict[str, list[dict[str, Any]]] = {}
    for r in tables["orders"]:
        user_orders.setdefault(r["user_id"], []).append(r)
    for rows in user_orders.values():
        rows.sort(key=lambda r: r["user_position"])
    items, fulfils, pays, variants = (
        by("order_items", "order_id"),
        by("fulfillments", "order_id"),
        by("payment_history", "order_id"),
        by("variants", "product_id"),
    )

    def pm_view(r: dict[str, Any]) -> dict[str, Any]:
        full = {
            "source": r["source"],
            "id": r["payment_method_id"],
            "brand": r["brand"],
            "last_four": r["last_four"],
            "balance": r["balance"],
        }
        return {f: full[f] for f in PM_FIELDS[r["source"]]}

    users = {}
    for u in sorted(tables["users"], key=lambda r: r["position"]):
        uid = u["user_id"]
        users[uid] = {
            "user_id": uid,
            "name": {"first_name": u["first_name"], "last_name": u["last_name"]},
            "address": addresses[u["address_id"]],
            "email": u["email"],
            "payment_methods": {r["payment_method_id"]: pm_view(r) for r in pms.get(uid, [])},
            "orders": [r["order_id"] for r in user_orders.get(uid, [])],
        }
    orders = {}
    for o in tables["orders"]:
        oid = o["order_id"]
        orders[oid] = {
            "order_id": oid,
            "user_id": o["user_id"],
            "address": addresses[o["address_id"]],
            "items": [
                {
                    "name": r["name"],
                    "product_id": r["product_id"],
                    "item_id": r["item_id"],
                    "price": r["price"],
                    "options": r["options"],
                }
                for r in items.get(oid, [])
            ],
            "status": o["status"],
            "fulfillments": [
                {"tracking_id": r["tracking_id"], "item_ids": r["item_ids"]} for r in fulfils.get(oid, [])
            ],
            "payment_history": [
                {
                    "transaction_type": r["transaction_type"],
                    "amount": r["amount"],
                    "payment_method_id": r["payment_method_id"],
                }
                for r in pays.get(oid, [])
            ],
            **{k: o[k] for k in ORDER_OPTIONAL},
        }
    products = {}
    for p in tables["products"]:
        pid = p["product_id"]
        products[pid] = {
            "name": p["name"],
            "product_id": pid,
            "variants": {
                r["item_id"]: {
                    "item_id": r["item_id"],
                    "options": r["options"],
                    "available": r["available"],
                    "price": r["price"],
                }
                for r in variants.get(pid, [])
            },
        }
    return {"products": products, "users": users, "orders": orders}


def tau2_initial(db: dict[str, Any]) -> dict[str, Any]:
    """db.json as tau2's models dump it: orders gain the optional fields as null."""
    out = copy.deepcopy(db)
    for o in out["orders"].values():
        for k in ORDER_OPTIONAL:
            o.setdefault(k, None)
    return out
