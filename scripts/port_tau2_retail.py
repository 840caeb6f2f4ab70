#!/usr/bin/env python3
"""Port tau2-bench's retail domain into a toolgym domain folder, and check that the port agrees.

    python scripts/port_tau2_retail.py build [--source DIR] [--out DIR]
    python scripts/port_tau2_retail.py agree [--source DIR] [--out DIR] [--task ID ...] [--verbose]

`build` reads tau2's retail data (db.json, tasks.json, policy.md, tool_schemas.json, split_tasks.json)
and writes, deterministically:

  domains/tau2-retail/seed/<table>.jsonl   the nested db.json normalised into tables
  domains/tau2-retail/policy.md            tau2's policy text, verbatim
  domains/tau2-retail/tasks.jsonl          the 114 tasks (gold calls, expect_error, answer facts, notes)
  domains/tau2-retail/domain.yaml          tables + the tools with tau2's exact names, descriptions and
                                           parameter schemas; operations from OPERATIONS below

It also checks the converter: exporting the seed tables back to tau2's nested shape must give
db.json exactly (with the optional order fields tau2's models add as null).

`agree` (needs the toolgym core) replays every task's gold calls through toolgym and compares with
tau2's own run (expected.jsonl): (a) each call's success or error, and the error text, (b) the final
state's changed records, exported back to tau2's shape, against `changes`, record by record, field by
field, (c) the outputs of calls that succeed, as data and as text.

`check_agreement()` returns those counts (tests/test_tau2_retail.py imports this file for it). The
exporter (`export_tau2`) exists only for the agreement check. Only data from tau2 is read; no tau2 code
is used.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
DEFAULT_SOURCE = REPO.parent / "shared" / "peers" / "tau2" / "retail"
DEFAULT_OUT = REPO / "domains" / "tau2-retail"

#: fields tau2's Order model has beyond those stored in db.json (null until a write sets them)
ORDER_OPTIONAL = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)
ADDRESS_FIELDS = ("address1", "address2", "city", "country", "state", "zip")
ORDER_STATUSES = [
    "pending",
    "processed",
    "delivered",
    "cancelled",
    "pending (item modified)",
    "exchange requested",
    "return requested",
]
#: which payment-method fields each source has in tau2 (CreditCard, Paypal, GiftCard models)
PM_FIELDS = {
    "credit_card": ("source", "id", "brand", "last_four"),
    "paypal": ("source", "id"),
    "gift_card": ("source", "id", "balance"),
}


# ---------------------------------------------------------------------------------------------
# tables


def _col(type_: str, **opts: Any) -> dict[str, Any]:
    return {"type": type_, **opts}


TABLES: dict[str, dict[str, Any]] = {
    "addresses": {
        "description": "Postal addresses. Each user and each order owns one row (tau2 copies addresses, never shares them).",
        "primary_key": "address_id",
        "columns": {
            "address_id": _col("string", description="'user:<user_id>' or 'order:<order_id>'"),
            "address1": _col("string"),
            "address2": _col("string"),
            "city": _col("string"),
            "country": _col("string"),
            "state": _col("string"),
            "zip": _col("string"),
        },
    },
    "users": {
        "description": "Customers.",
        "primary_key": "user_id",
        "columns": {
            "user_id": _col("string"),
            "position": _col(
                "integer", description="order in tau2's database (lookups return the first match)"
            ),
            "first_name": _col("string"),
            "last_name": _col("string"),
            "address_id": _col(
                "string", unique=True, references="addresses.address_id", description="default address"
            ),
            "email": _col("string", unique=True),
        },
    },
    "payment_methods": {
        "description": "A user's payment methods, in the order tau2 lists them. Gift cards carry a balance.",
        "primary_key": "payment_method_id",
        "columns": {
            "payment_method_id": _col("string"),
            "user_id": _col("string", references="users.user_id"),
            "position": _col("integer", description="order within the user's payment methods"),
            "source": _col("string", enum=["credit_card", "paypal", "gift_card"]),
            "brand": _col("string", nullable=True, description="credit cards only"),
            "last_four": _col("string", nullable=True, description="credit cards only"),
            "balance": _col("number", nullable=True, description="gift cards only"),
        },
    },
    "products": {
        "description": "Product types.",
        "primary_key": "product_id",
        "columns": {
            "product_id": _col("string"),
            "name": _col("string"),
        },
    },
    "variants": {
        "description": "Variant items of a product (tau2's `variants`); item ids are unique across products.",
        "primary_key": "item_id",
        "columns": {
            "item_id": _col("string"),
            "product_id": _col("string", references="products.product_id"),
            "position": _col("integer", description="order within the product's variants"),
            "options": _col("json", description="option name -> value"),
            "available": _col("boolean"),
            "price": _col("number"),
        },
    },
    "orders": {
        "description": "Orders. The exchange/return/cancel fields are null until the matching write sets them.",
        "primary_key": "order_id",
        "columns": {
            "order_id": _col("string"),
            "user_id": _col("string", references="users.user_id"),
            "user_position": _col("integer", description="order within the user's `orders` list"),
            "address_id": _col("string", unique=True, references="addresses.address_id"),
            "status": _col("string", enum=ORDER_STATUSES),
            "cancel_reason": _col("string", nullable=True),
            "exchange_items": _col("json", nullable=True, description="sorted list of item ids"),
            "exchange_new_items": _col("json", nullable=True, description="sorted list of item ids"),
            "exchange_payment_method_id": _col(
                "string", nullable=True, references="payment_methods.payment_method_id"
            ),
            "exchange_price_difference": _col("number", nullable=True),
            "return_items": _col("json", nullable=True, description="sorted list of item ids"),
            "return_payment_method_id": _col(
                "string", nullable=True, references="payment_methods.payment_method_id"
            ),
        },
    },
    "order_items": {
        "description": "The items of an order (an item id may appear more than once in one order).",
        "primary_key": "line_id",
        "columns": {
            "line_id": _col("integer"),
            "order_id": _col("string", references="orders.order_id"),
            "position": _col("integer"),
            "item_id": _col("string", references="variants.item_id"),
            "product_id": _col("string", references="products.product_id"),
            "name": _col("string"),
            "price": _col("number"),
            "options": _col("json"),
        },
    },
    "fulfillments": {
        "description": "Shipments of an order: tracking ids and the item ids shipped.",
        "primary_key": "fulfillment_id",
        "columns": {
            "fulfillment_id": _col("integer"),
            "order_id": _col("string", references="orders.order_id"),
            "position": _col("integer"),
            "tracking_id": _col("json", description="list of tracking ids"),
            "item_ids": _col("json", description="list of item ids"),
        },
    },
    "payment_history": {
        "description": "Payments and refunds of an order, in order.",
        "primary_key": "payment_id",
        "columns": {
            "payment_id": _col("integer"),
            "order_id": _col("string", references="orders.order_id"),
            "position": _col("integer"),
            "transaction_type": _col("string", enum=["payment", "refund"]),
            "amount": _col("number"),
            "payment_method_id": _col("string", references="payment_methods.payment_method_id"),
        },
    },
    "handoffs": {
        "description": (
            "Transfers to a human agent. tau2 records none; here each transfer is a row, so the state "
            "diff sees whether one happened (tasks ignore the summary text and the time)."
        ),
        "primary_key": "handoff_id",
        "columns": {
            "handoff_id": _col("integer"),
            "summary": _col("string"),
            "created_at": _col("datetime", default="$now"),
        },
    },
}


def normalise(db: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """tau2's nested db.json -> rows per table (columns in TABLES order; list order kept as `position`)."""
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in TABLES}
    user_pos: dict[str, int] = {}
    for upos, (uid, u) in enumerate(db["users"].items()):
        aid = f"user:{uid}"
        out["addresses"].append({"address_id": aid, **{f: u["address"][f] for f in ADDRESS_FIELDS}})
        out["users"].append(
            {
                "user_id": uid,
                "position": upos,
                "first_name": u["name"]["first_name"],
                "last_name": u["name"]["last_name"],
                "address_id": aid,
                "email": u["email"],
            }
        )
        for pos, (pmid, pm) in enumerate(u["payment_methods"].items()):
            out["payment_methods"].append(
                {
                    "payment_method_id": pmid,
                    "user_id": uid,
                    "position": pos,
                    "source": pm["source"],
                    "brand": pm.get("brand"),
                    "last_four": pm.get("last_four"),
                    "balance": pm.get("balance"),
                }
            )
        for pos, oid in enumerate(u["orders"]):
            user_pos[oid] = pos
    for pid, p in db["products"].items():
        out["products"].append({"product_id": pid, "name": p["name"]})
        for pos, (vid, v) in enumerate(p["variants"].items()):
            out["variants"].append(
                {
                    "item_id": vid,
                    "product_id": pid,
                    "position": pos,
                    "options": v["options"],
                    "available": v["available"],
                    "price": v["price"],
                }
            )
    line = fulfil = pay = 0
    for oid, o in db["orders"].items():
        aid = f"order:{oid}"
        out["addresses"].append({"address_id": aid, **{f: o["address"][f] for f in ADDRESS_FIELDS}})
        row = {
            "order_id": oid,
            "user_id": o["user_id"],
            "user_position": user_pos[oid],
            "address_id": aid,
            "status": o["status"],
        }
        row.update({k: o.get(k) for k in ORDER_OPTIONAL})
        out["orders"].append(row)
        for pos, it in enumerate(o["items"]):
            line += 1
            out["order_items"].append(
                {
                    "line_id": line,
                    "order_id": oid,
                    "position": pos,
                    "item_id": it["item_id"],
                    "product_id": it["product_id"],
                    "name": it["name"],
                    "price": it["price"],
                    "options": it["options"],
                }
            )
        for pos, f in enumerate(o["fulfillments"]):
            fulfil += 1
            out["fulfillments"].append(
                {
                    "fulfillment_id": fulfil,
                    "order_id": oid,
                    "position": pos,
                    "tracking_id": f["tracking_id"],
                    "item_ids": f["item_ids"],
                }
            )
        for pos, ph in enumerate(o["payment_history"]):
            pay += 1
            out["payment_history"].append(
                {
                    "payment_id": pay,
                    "order_id": oid,
                    "position": pos,
                    "transaction_type": ph["transaction_type"],
                    "amount": ph["amount"],
                    "payment_method_id": ph["payment_method_id"],
                }
            )
    return out


# ---------------------------------------------------------------------------------------------
# the exporter: tables -> tau2's nested shape (used only by the agreement check)


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


# ---------------------------------------------------------------------------------------------
# operations, in the documented language. `- splice: NAME` with `with: {param: expr}` inlines a
# fragment below (its parameters become `let` steps); fragments end in `return`, so they are only
# spliced at the end of an operation.

FRAGMENTS_YAML = r"""
order_view:
  # tau2's Order object for order id $oid (field order as tau2's model dumps it)
  - get: orders
    key: {order_id: $oid}
    error: Order not found
    as: ov
  - get: addresses
    key: {address_id: $ov.address_id}
    as: ov_address
  - list: order_items
    where: [{column: order_id, value: $oid, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: ov_items
  - list: fulfillments
    where: [{column: order_id, value: $oid, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: ov_fulfillments
  - list: payment_history
    where: [{column: order_id, value: $oid, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: ov_payments
  - return:
      merge:
        - object:
            order_id: $ov.order_id
            user_id: $ov.user_id
            address: {pick: [$ov_address, [address1, address2, city, country, state, zip]]}
            items: {map: {over: $ov_items, as: r, to: {pick: [$r, [name, product_id, item_id, price, options]]}}}
            status: $ov.status
            fulfillments: {map: {over: $ov_fulfillments, as: r, to: {pick: [$r, [tracking_id, item_ids]]}}}
            payment_history: {map: {over: $ov_payments, as: r, to: {pick: [$r, [transaction_type, amount, payment_method_id]]}}}
        - pick: [$ov, [cancel_reason, exchange_items, exchange_new_items, exchange_payment_method_id, exchange_price_difference, return_items, return_payment_method_id]]

user_view:
  # tau2's User object for user id $uid; payment_methods is an object keyed by id, each method with
  # only its source's fields (tau2's CreditCard / Paypal / GiftCard models)
  - get: users
    key: {user_id: $uid}
    error: User not found
    as: uv
  - get: addresses
    key: {address_id: $uv.address_id}
    as: uv_address
  - list: payment_methods
    where: [{column: user_id, value: $uid, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: uv_pms
  - list: orders
    where: [{column: user_id, value: $uid, skip_if_null: false}]
    order_by: [user_position]
    max_limit: null
    as: uv_orders
  - return:
      object:
        user_id: $uv.user_id
        name: {pick: [$uv, [first_name, last_name]]}
        address: {pick: [$uv_address, [address1, address2, city, country, state, zip]]}
        email: $uv.email
        payment_methods:
          object_from:
            - $uv_pms.payment_method_id
            - map:
                over: $uv_pms
                as: pm
                to:
                  pick:
                    - {object: {source: $pm.source, id: $pm.payment_method_id, brand: $pm.brand, last_four: $pm.last_four, balance: $pm.balance}}
                    - {get: [{object: @PM_FIELDS@}, $pm.source]}
        orders: $uv_orders.order_id
"""

OPERATIONS_YAML = r"""
calculate:
  # tau2: reject any character outside "0123456789+-*/(). ", evaluate as Python, return
  # str(round(float(value), 2)). `calc` is Python's arithmetic on exactly that alphabet.
  # WORKAROUND (no way to list a string's characters): the character test is "contains one of the
  # ASCII characters tau2 rejects, or a cased letter" (lower != upper); see the domain README.
  - require:
      not:
        or:
          - {ne: [{lower: $args.expression}, {upper: $args.expression}]}
          - {exists: {filter: {over: @BAD_CHARS@, as: c, where: {contains: [$args.expression, $c]}}}}
    error: Invalid characters in expression
  - let: value
    value: {calc: $args.expression}
  - fail: "Cannot evaluate the expression (a syntax error, a division by zero, or a value out of range)"
    when: {is_null: $value}
  - return: {to_string: {round: [{mul: [$value, 1.0]}, 2]}}

cancel_pending_order:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, pending]}
    error: Non-pending order cannot be cancelled
  - require: {in: [$args.reason, [no longer needed, ordered by mistake]]}
    error: Invalid reason
  - list: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: payments
  # one refund per payment-history entry (refunds included), gift cards credited at once
  - for_each: $payments
    as: p
    index: i
    steps:
      - create: payment_history
        values:
          order_id: $args.order_id
          position: {add: [{len: $payments}, $i]}
          transaction_type: refund
          amount: $p.amount
          payment_method_id: $p.payment_method_id
      - get: payment_methods
        key: {payment_method_id: $p.payment_method_id, user_id: $order.user_id}
        error: Payment method not found
        as: pm
      - update: payment_methods
        key: {payment_method_id: $pm.payment_method_id}
        set: {balance: {round: [{add: [$row.balance, $p.amount]}, 2]}}
        when: {eq: [$pm.source, gift_card]}
  - update: orders
    key: {order_id: $args.order_id}
    set: {status: cancelled, cancel_reason: $args.reason}
  - splice: order_view
    with: {oid: $args.order_id}

exchange_delivered_order_items:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, delivered]}
    error: Non-delivered order cannot be exchanged
  - list: order_items
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    max_limit: null
    as: order_items
  # the first requested id asked for more often than the order holds it
  - let: missing
    value: {filter: {over: $args.item_ids, as: x, where: {gt: [{count: [$args.item_ids, $x]}, {count: [$order_items.item_id, $x]}]}}}
  - fail: "Number of {missing.0} not found."
    when: {exists: $missing}
  - require: {eq: [{len: $args.item_ids}, {len: $args.new_item_ids}]}
    error: The number of items to be exchanged should match.
  - let: diff
    value: 0
  - for_each: $args.item_ids
    as: iid
    index: i
    steps:
      - let: new_iid
        value: {at: [$args.new_item_ids, $i]}
      - get: order_items
        where:
          - {column: order_id, value: $args.order_id, skip_if_null: false}
          - {column: item_id, value: $iid, skip_if_null: false}
        order_by: [position]
        error: "Number of {iid} not found."
        as: item
      - get: variants
        key: {item_id: $new_iid, product_id: $item.product_id}
        error: Variant not found
        as: variant
      - require: $variant.available
        error: "New item {new_iid} not found or available"
      - let: diff
        value: {add: [$diff, {sub: [$variant.price, $item.price]}]}
  - let: diff
    value: {round: [$diff, 2]}
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - require: {not: {and: [{eq: [$pm.source, gift_card]}, {lt: [$pm.balance, $diff]}]}}
    error: Insufficient gift card balance to pay for the price difference
  - update: orders
    key: {order_id: $args.order_id}
    set:
      status: exchange requested
      exchange_items: {sort: $args.item_ids}
      exchange_new_items: {sort: $args.new_item_ids}
      exchange_payment_method_id: $args.payment_method_id
      exchange_price_difference: $diff
  - splice: order_view
    with: {oid: $args.order_id}

find_user_id_by_email:
  # tau2: the first user, in its database order, whose email equals the argument ignoring case
  - get: users
    where: [{column: email, op: ieq, value: $args.email, skip_if_null: false}]
    order_by: [position]
    error: User not found
    as: user
  - return: $user.user_id

find_user_id_by_name_zip:
  # tau2: the first user, in its database order, whose first and last names equal the arguments
  # ignoring case and whose own address has exactly this zip
  - list: addresses
    where: [{column: zip, value: $args.zip, skip_if_null: false}]
    max_limit: null
    as: zip_addresses
  - get: users
    where:
      - {column: address_id, op: in, value: $zip_addresses.address_id, skip_if_null: false}
      - {column: first_name, op: ieq, value: $args.first_name, skip_if_null: false}
      - {column: last_name, op: ieq, value: $args.last_name, skip_if_null: false}
    order_by: [position]
    error: User not found
    as: user
  - return: $user.user_id

get_item_details:
  - get: variants
    key: {item_id: $args.item_id}
    error: Item not found
    as: v
  - return: {pick: [$v, [item_id, options, available, price]]}

get_order_details:
  - splice: order_view
    with: {oid: $args.order_id}

get_product_details:
  - get: products
    key: {product_id: $args.product_id}
    error: Product not found
    as: product
  - list: variants
    where: [{column: product_id, value: $args.product_id, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: variants
  - return:
      object:
        name: $product.name
        product_id: $product.product_id
        variants: {index_by: [{map: {over: $variants, as: v, to: {pick: [$v, [item_id, options, available, price]]}}}, item_id]}

get_user_details:
  - splice: user_view
    with: {uid: $args.user_id}

list_all_product_types:
  # tau2 returns json.dumps({name: product_id}, sort_keys=True): here the same object, keys in that order
  - list: products
    order_by: [name]
    max_limit: null
    as: products
  - return: {object_from: [$products.name, $products.product_id]}

modify_pending_order_address:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {contains: [$order.status, pending]}
    error: Non-pending order cannot be modified
  - update: addresses
    key: {address_id: $order.address_id}
    set: {address1: $args.address1, address2: $args.address2, city: $args.city, country: $args.country, state: $args.state, zip: $args.zip}
  - splice: order_view
    with: {oid: $args.order_id}

modify_pending_order_items:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, pending]}
    error: Non-pending order cannot be modified
  - list: order_items
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    max_limit: null
    as: order_items
  - let: missing
    value: {filter: {over: $args.item_ids, as: x, where: {gt: [{count: [$args.item_ids, $x]}, {count: [$order_items.item_id, $x]}]}}}
  - fail: "{missing.0} not found"
    when: {exists: $missing}
  - require: {eq: [{len: $args.item_ids}, {len: $args.new_item_ids}]}
    error: The number of items to be exchanged should match
  - let: diff
    value: 0
  - for_each: $args.item_ids
    as: iid
    index: i
    steps:
      - let: new_iid
        value: {at: [$args.new_item_ids, $i]}
      - require: {ne: [$iid, $new_iid]}
        error: The new item id should be different from the old item id
      - get: order_items
        where:
          - {column: order_id, value: $args.order_id, skip_if_null: false}
          - {column: item_id, value: $iid, skip_if_null: false}
        order_by: [position]
        error: "{iid} not found"
        as: item
      - get: variants
        key: {item_id: $new_iid, product_id: $item.product_id}
        error: Variant not found
        as: variant
      - require: $variant.available
        error: "New item {new_iid} not found or available"
      # the price difference is not rounded (tau2 stores e.g. 0.04999999999999716)
      - let: diff
        value: {add: [$diff, {sub: [$variant.price, $item.price]}]}
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - require: {not: {and: [{eq: [$pm.source, gift_card]}, {lt: [$pm.balance, $diff]}]}}
    error: Insufficient gift card balance to pay for the new item
  - count: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    as: n_payments
  - create: payment_history
    values:
      order_id: $args.order_id
      position: $n_payments
      transaction_type: {if: [{gt: [$diff, 0]}, payment, refund]}
      amount: {abs: $diff}
      payment_method_id: $args.payment_method_id
  - update: payment_methods
    key: {payment_method_id: $pm.payment_method_id}
    set: {balance: {round: [{sub: [$row.balance, $diff]}, 2]}}
    when: {eq: [$pm.source, gift_card]}
  # tau2 quirk, reproduced: every modified line takes the price and options of the LAST new variant
  # ($variant after the loop above is the last pass's), not its own
  - let: last_variant
    value: $variant
  - for_each: $args.item_ids
    as: iid
    index: i
    steps:
      - get: order_items
        where:
          - {column: order_id, value: $args.order_id, skip_if_null: false}
          - {column: item_id, value: $iid, skip_if_null: false}
        order_by: [position]
        error: "{iid} not found"
        as: line
      - update: order_items
        key: {line_id: $line.line_id}
        set: {item_id: {at: [$args.new_item_ids, $i]}, price: $last_variant.price, options: $last_variant.options}
  - update: orders
    key: {order_id: $args.order_id}
    set: {status: pending (item modified)}
  - splice: order_view
    with: {oid: $args.order_id}

modify_pending_order_payment:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {contains: [$order.status, pending]}
    error: Non-pending order cannot be modified
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - list: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    order_by: [position]
    max_limit: null
    as: payments
  - let: first
    value: {at: [$payments, 0]}
  - require: {and: [{eq: [{len: $payments}, 1]}, {eq: [$first.transaction_type, payment]}]}
    error: There should be exactly one payment for a pending order
  - require: {ne: [$first.payment_method_id, $args.payment_method_id]}
    error: The new payment method should be different from the current one
  - require: {not: {and: [{eq: [$pm.source, gift_card]}, {lt: [$pm.balance, $first.amount]}]}}
    error: Insufficient gift card balance to pay for the order
  - create: payment_history
    values: {order_id: $args.order_id, position: 1, transaction_type: payment, amount: $first.amount, payment_method_id: $args.payment_method_id}
  - create: payment_history
    values: {order_id: $args.order_id, position: 2, transaction_type: refund, amount: $first.amount, payment_method_id: $first.payment_method_id}
  - update: payment_methods
    key: {payment_method_id: $pm.payment_method_id}
    set: {balance: {round: [{sub: [$row.balance, $first.amount]}, 2]}}
    when: {eq: [$pm.source, gift_card]}
  - get: payment_methods
    key: {payment_method_id: $first.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: old_pm
  - update: payment_methods
    key: {payment_method_id: $old_pm.payment_method_id}
    set: {balance: {round: [{add: [$row.balance, $first.amount]}, 2]}}
    when: {eq: [$old_pm.source, gift_card]}
  - splice: order_view
    with: {oid: $args.order_id}

modify_user_address:
  - get: users
    key: {user_id: $args.user_id}
    error: User not found
    as: user
  - update: addresses
    key: {address_id: $user.address_id}
    set: {address1: $args.address1, address2: $args.address2, city: $args.city, country: $args.country, state: $args.state, zip: $args.zip}
  - splice: user_view
    with: {uid: $args.user_id}

return_delivered_order_items:
  - get: orders
    key: {order_id: $args.order_id}
    error: Order not found
    as: order
  - require: {eq: [$order.status, delivered]}
    error: Non-delivered order cannot be returned
  - get: users
    key: {user_id: $order.user_id}
    error: User not found
    as: user
  - get: payment_methods
    key: {payment_method_id: $args.payment_method_id, user_id: $order.user_id}
    error: Payment method not found
    as: pm
  - get: payment_history
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    order_by: [position]
    optional: true
    as: first_payment
  - require: {or: [{eq: [$pm.source, gift_card]}, {eq: [$args.payment_method_id, $first_payment.payment_method_id]}]}
    error: Payment method should be the original payment method
  - list: order_items
    where: [{column: order_id, value: $args.order_id, skip_if_null: false}]
    max_limit: null
    as: order_items
  - require: {not: {exists: {filter: {over: $args.item_ids, as: x, where: {gt: [{count: [$args.item_ids, $x]}, {count: [$order_items.item_id, $x]}]}}}}}
    error: Some item not found
  - update: orders
    key: {order_id: $args.order_id}
    set: {status: return requested, return_items: {sort: $args.item_ids}, return_payment_method_id: $args.payment_method_id}
  - splice: order_view
    with: {oid: $args.order_id}

transfer_to_human_agents:
  # tau2 writes nothing; here the transfer is recorded so that the state diff sees it (tasks ignore
  # the summary text and the time, as tau2 ignores the summary when comparing actions)
  - create: handoffs
    values: {summary: $args.summary}
  - return: Transfer successful
"""

#: comments written above a tool in the generated domain.yaml (the YAML comments above are not kept by the dump)
TOOL_NOTES = {
    "calculate": (
        "WORKAROUND: the invalid-character test lists the ASCII characters tau2 rejects and tests for cased "
        "letters (no operator lists a string's characters); evaluation errors share one message"
    ),
    "modify_pending_order_items": "tau2 quirk kept: every modified item takes the price and options of the LAST new variant",
    "transfer_to_human_agents": "kind write (tau2: generic, no state): the transfer is recorded in `handoffs`",
}

WRITE_TOOLS = {
    "cancel_pending_order",
    "exchange_delivered_order_items",
    "modify_pending_order_address",
    "modify_pending_order_items",
    "modify_pending_order_payment",
    "modify_user_address",
    "return_delivered_order_items",
}
#: tools whose kind here differs from tau2's `mutates_state`, and why
KIND_OVERRIDES = {"transfer_to_human_agents": "write"}  # records a handoff row (tau2 records nothing)

#: characters tau2's calculate accepts; every other ASCII character is listed for the invalid-character test
CALC_ALPHABET = set("0123456789+-*/(). ")


def _bad_chars() -> list[str]:
    """The ASCII characters calculate rejects, as literal expressions (a leading `$` is escaped)."""
    return ["$$" if c == "$" else c for c in map(chr, range(128)) if c not in CALC_ALPHABET]


def _placeholders() -> dict[str, str]:
    """@NAME@ placeholders in the YAML above -> flow-style YAML text."""

    def dump(value: Any) -> str:
        return yaml.safe_dump(value, default_flow_style=True, width=10**6).strip()

    return {
        "@PM_FIELDS@": dump({k: list(v) for k, v in PM_FIELDS.items()}),
        "@BAD_CHARS@": dump(_bad_chars()),
    }


def _load_yaml(text: str) -> Any:
    for key, value in _placeholders().items():
        text = text.replace(key, value)
    return yaml.safe_load(text)


def _expand(steps: list[Any], fragments: dict[str, list[Any]]) -> list[Any]:
    """Inline `splice:` steps: each parameter becomes a `let`, then the fragment's steps follow."""
    out: list[Any] = []
    for step in steps:
        if isinstance(step, dict) and "splice" in step:
            for param, value in step.get("with", {}).items():
                out.append({"let": param, "value": value})
            out.extend(_expand(copy.deepcopy(fragments[step["splice"]]), fragments))
        elif isinstance(step, dict) and "for_each" in step:
            out.append({**step, "steps": _expand(step["steps"], fragments)})
        else:
            out.append(step)
    return out


def build_tools(schemas: dict[str, Any]) -> list[dict[str, Any]]:
    fragments = _load_yaml(FRAGMENTS_YAML)
    operations = _load_yaml(OPERATIONS_YAML)
    tools = []
    names = []
    for entry in schemas["assistant"]:
        fn = entry["schema"]["function"]
        name = fn["name"]
        names.append(name)
        if name not in operations:
            raise SystemExit(f"no operation written for tau2 tool {name!r}")
        kind = "write" if entry.get("mutates_state") else "read"
        if (kind == "write") != (name in WRITE_TOOLS):
            raise SystemExit(
                f"tool {name!r}: tau2 says mutates_state={entry.get('mutates_state')}, the port disagrees"
            )
        tools.append(
            {
                "name": name,
                "description": fn["description"],
                "kind": KIND_OVERRIDES.get(name, kind),
                "input_schema": fn["parameters"],
                "operation": _expand(operations[name], fragments),
            }
        )
    extra = set(operations) - set(names)
    if extra:
        raise SystemExit(f"operations for tools tau2 does not have: {sorted(extra)}")
    return tools


# ---------------------------------------------------------------------------------------------
# tasks


def instruction_text(task: dict[str, Any]) -> str:
    """tau2's user scenario as one readable text (the fields tau2 gives its user simulator)."""
    scenario = task["user_scenario"]
    ins = scenario["instructions"]
    parts = []
    if scenario.get("persona"):
        parts.append(f"Persona: {scenario['persona']}")
    if isinstance(ins, str):
        parts.append(ins.strip())
    else:
        for label, key in (
            ("Reason for call", "reason_for_call"),
            ("Known info", "known_info"),
            ("Unknown info", "unknown_info"),
            ("Task instructions", "task_instructions"),
        ):
            text = (ins.get(key) or "").strip()
            if text and text != ".":
                parts.append(f"{label}: {text}")
    return "\n".join(parts)


def convert_tasks(
    tasks: list[dict[str, Any]], expected: dict[str, Any], split: dict[str, list[str]]
) -> list[dict[str, Any]]:
    where = {tid: name for name in ("train", "test") for tid in split.get(name, [])}
    out = []
    for t in tasks:
        tid = t["id"]
        gold = expected[tid]["gold_calls"]
        actions = t["evaluation_criteria"]["actions"] or []
        if len(gold) != len(actions):
            raise SystemExit(
                f"task {tid}: {len(actions)} actions but {len(gold)} gold calls in expected.jsonl"
            )
        calls = []
        for a, g in zip(actions, gold, strict=True):
            if a["name"] != g["name"] or a["arguments"] != g["arguments"]:
                raise SystemExit(f"task {tid}: action {a['action_id']} differs from expected.jsonl's call")
            call: dict[str, Any] = {"name": a["name"], "arguments": a["arguments"]}
            if g["error"]:
                call["expect_error"] = True
            if a["name"] == "transfer_to_human_agents":
                call["free"] = ["summary"]  # the agent words the summary; validation does not mutate it
            calls.append(call)
        tags = ["tau2"]
        if tid in where:
            tags.append(where[tid])
        task: dict[str, Any] = {
            "id": tid,
            "instruction": instruction_text(t),
            "calls": calls,
            "answer_facts": list(t["evaluation_criteria"].get("communicate_info") or []),
        }
        if any(c["name"] == "transfer_to_human_agents" for c in calls):
            task["ignore_columns"] = list(HANDOFF_IGNORED)
        task["tags"] = tags
        notes = task_notes(t)
        if notes:
            task["notes"] = notes
        out.append(task)
    return out


#: handoff columns no task compares (tau2 ignores the transfer summary; the time is the clock's)
HANDOFF_IGNORED = ("handoffs.summary", "handoffs.created_at")


def task_notes(task: dict[str, Any]) -> list[str]:
    """tau2's ungraded-here text: its purpose line, NL assertions (graded by an LLM in tau2), open issues."""
    notes = []
    purpose = (task.get("description") or {}).get("purpose")
    if purpose:
        notes.append(f"tau2 purpose: {purpose}")
    for text in task["evaluation_criteria"].get("nl_assertions") or []:
        notes.append(f"tau2 NL assertion: {text}")
    for issue in task.get("issues") or []:
        notes.append(f"tau2 open issue {issue['id']} ({issue['created_at']}): {issue['title']}")
    return notes


# ---------------------------------------------------------------------------------------------
# writing


README = """# tau2-retail

A port of the retail domain of [tau2-bench](https://github.com/sierra-research/tau2-bench)
(commit a2c024725189473d2d7cea3a5cfdbcc67478e41f; MIT licence, see LICENSE): the same 16 tools with the
same names, descriptions and parameter schemas, the same data normalised into tables, tau2's policy
text, and its 114 tasks.

Everything in this folder is generated by `scripts/port_tau2_retail.py build`; edit the script.
`scripts/port_tau2_retail.py agree [-v]` replays every gold call and compares errors, outputs and the
final state with tau2's own run of the same calls (`../shared/peers/tau2/retail/expected.jsonl`);
`tests/test_tau2_retail.py` asserts the figures below. What each tool does, with the evidence:
docs/notes/tau2-retail-semantics.md; the language gaps the port ran into: docs/notes/tau2-retail-gaps.md.

## Agreement with tau2

| check | result |
|---|---|
| final state (every changed user/order/product record, field by field) | **114/114 tasks** |
| gold calls that fail exactly when they fail in tau2 | **550/550** |
| error texts of the 18 failing gold calls (`"Error: " + message` == tau2's output), incl. the failing writes of tasks 64 and 105 | **18/18** |
| outputs of the 532 gold calls that succeed, as data | **532/532** |
| the same outputs as text (`json.dumps(result)`, strings as is, == tau2's output) | **532/532** |

So on tau2's gold calls the port is byte-identical. State is compared by exporting the tables back to
tau2's nested shape (`export_tau2` in the script; the `handoffs` table and `users.position` are not part
of tau2's state and are left out).

## Data

Ten tables: `addresses` (each user and each order owns a copy, as in tau2), `users` (`position` = tau2's
database order, so lookups return tau2's first match), `payment_methods`, `products`, `variants`,
`orders` (with tau2's seven optional fields: cancel reason, exchange and return details), `order_items`
(a surrogate `line_id` plus `position`: an order may hold one item id twice), `fulfillments`,
`payment_history`, and `handoffs` (below). The script checks that exporting the seed gives db.json back.

## Deliberate differences from tau2

- **Transfers are recorded.** `transfer_to_human_agents` is `kind: write` here (tau2: "generic", no
  state) and adds a `handoffs` row (`summary`, `created_at`), so the state diff sees whether a transfer
  happened. Tasks with a gold transfer (10, 12, 26, 50) ignore `handoffs.summary` and
  `handoffs.created_at` (tau2 ignores the summary too: `compare_args: []`). This is stricter than tau2,
  which does not grade transfers at all: here a missing transfer fails those tasks, and a transfer in a
  task whose gold has none fails it.
- **Task notes.** tau2's natural-language assertions (graded by an LLM in tau2), its `purpose` lines and
  the open issues its maintainers filed (tasks 4, 5, 7) are kept as `notes` (ungraded): 42 tasks.
  `communicate_info` became `answer_facts`; tau2's train/test split is a tag.
- There is no `think` tool in tau2's retail tool list, so there is none here.

## Tasks that change no state (left as the peer shipped them)

tau2 grades tasks 25, 57, 65 and 105 by its DB check (nothing may change) plus NL assertions; they have
no `communicate_info`. In toolgym doing nothing passes them, and `toolgym validate` flags them
`no-op-passes`. They are the peer's defects and are kept as shipped: no answer facts were invented.
- 25 and 65: lookups only (the right outcome is to refuse or explain); 57: no gold calls at all;
  105: the only write fails by design (insufficient gift-card balance; its NL assertion is in `notes`).
- 10, 12 and 50 were no-op tasks too (a transfer was the whole outcome); with `handoffs` they are not
  any more: the transfer is the expected change. (26 has a transfer and a return.)

Other findings of `toolgym validate` that come from tau2's tasks as shipped (validate reports 56 valid,
52 `unreachable-fact`, 4 `no-op-passes`, 2 `weak-verifier`):
- `unreachable-fact` on 52 tasks: tau2's gold lists only some of the calls, so an order or item id first
  appears in a write (e.g. task 36 modifies `#W9348897`, which neither the instruction nor an earlier gold
  call shows). An agent can still learn such ids through tools the gold solution skips
  (`get_user_details`, `get_order_details`), so these are gaps in the peer's gold solutions, not tasks an
  agent cannot solve. (Ids that argument-less read tools reveal, like `list_all_product_types`, count as
  known.)
- `weak-verifier` on tasks 22 and 110: a `modify_user_address` gold call that the final state cannot tell
  from none (110 sets the address the user already has; in 22 a later call restores it).
- Transfer summaries are marked `free` (the agent words them), so they are not flagged.

## Workarounds the language still forces

- **calculate's character test.** tau2 rejects any character outside `0123456789+-*/(). ` before
  evaluating. No operator lists a string's characters, so the port tests "contains one of the 111 ASCII
  characters tau2 rejects (a literal list), or a cased letter (`lower` != `upper`)". Exact for ASCII
  and for letters of any script; other non-ASCII characters slip through to `calc`, which accepts
  Unicode digits and spaces (`"\u0663+1"` gives `"4.0"`, tau2 says `Invalid characters in expression`)
  and rejects the rest with the evaluation message below. Proposed: `chars: TEXT` (the list of its
  characters), making the test one `filter`.
- **calculate's evaluation errors share one message.** `calc` is null on any failure, without the
  reason, so a syntax error, a division by zero and an overflow all give `Cannot evaluate the expression
  (a syntax error, a division by zero, or a value out of range)`; tau2 prints Python's exception text
  (`division by zero`, `'(' was never closed (<string>, line 1)`, ...). Proposed: `calc_error: TEXT`
  (null when `calc` succeeds, else `syntax`, `division by zero` or `out of range`).
- **calc's safety bounds** (not a gap; by design): powers with |exponent| > 1000, integers above 1e308
  and infinite results are errors here, where tau2 computes them (`1**5000` = `"1.0"`, `10.**308*10` =
  `"inf"`) or hangs (`9**9**9`).
- **Shared views are spliced by the script.** tau2's Order object (seven tools) and User object (two)
  are assembled by the same steps each time; the script inlines them (`splice:` in the script), so the
  generated domain.yaml repeats them. The core is gaining `fragments:` / `use:` for this; once
  documented the script can emit them instead.

No other workaround is left: computed-key objects (`payment_methods`, `variants`,
`list_all_product_types`) use `object_from` / `index_by`, projections use `map` and `pick`, stored item
lists use `sort`, lookups use `ieq` and `get ... order_by`, internal lists `max_limit: null`.

## Remaining kinds of output difference

None on the gold calls (above). Elsewhere:
- calculate, on the inputs listed under workarounds;
- error texts of branches no gold call reaches (`Variant not found`, `Payment method not found`, ...)
  follow tau2's code as documented in the semantics note but are not proven by tau2's run;
- argument checking: toolgym validates arguments against tau2's JSON Schemas (which allow extra
  properties), so an extra argument is accepted and a wrongly typed one fails with toolgym's schema
  message, where tau2's Python call would fail with its own text;
- `list_all_product_types` returns the object; tau2 returns its `json.dumps(..., sort_keys=True)` text,
  which is exactly `json.dumps` of the port's result.

tau2's own quirks are reproduced, not fixed: `modify_pending_order_items` gives every modified line the
price and options of the last new variant (tasks 20, 21, 36, 37, 100 depend on it), cancelling after a
payment change refunds the old refund too, and exchanges and returns book no refund.
"""


class _Dumper(yaml.SafeDumper):
    pass


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data.strip():  # multi-line text (descriptions), not a lone newline character
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def build(source: Path, out: Path) -> None:
    db = json.loads((source / "db.json").read_text(encoding="utf-8"))
    tasks = json.loads((source / "tasks.json").read_text(encoding="utf-8"))
    schemas = json.loads((source / "tool_schemas.json").read_text(encoding="utf-8"))
    split = json.loads((source / "split_tasks.json").read_text(encoding="utf-8"))
    expected = {}
    for line in (source / "expected.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            expected[rec["task_id"]] = rec

    tables = normalise(db)
    back = export_tau2(tables)
    if back != tau2_initial(db):
        raise SystemExit("converter self-check failed: exporting the seed tables does not give db.json back")

    domain = {
        "name": "tau2-retail",
        "version": "0.2.0",
        "description": (
            "Port of tau2-bench's retail customer-service domain (sierra-research/tau2-bench, MIT): "
            "users, orders, products; cancel/modify pending orders, return/exchange delivered ones."
        ),
        "tables": TABLES,
        "tools": build_tools(schemas),
    }
    (out / "seed").mkdir(parents=True, exist_ok=True)
    for name, rows in tables.items():
        (out / "seed" / f"{name}.jsonl").write_text(_jsonl(rows), encoding="utf-8")
    (out / "policy.md").write_text((source / "policy.md").read_text(encoding="utf-8"), encoding="utf-8")
    (out / "tasks.jsonl").write_text(_jsonl(convert_tasks(tasks, expected, split)), encoding="utf-8")
    header = "# Generated by scripts/port_tau2_retail.py from tau2-bench's retail data; edit the script, not this file.\n"
    text = yaml.dump(
        domain, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=200, default_flow_style=None
    )
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("- name: ") and line[8:].strip() in TOOL_NOTES:
            lines.append(f"# {TOOL_NOTES[line[8:].strip()]} (see README.md)\n")
        lines.append(line)
    (out / "domain.yaml").write_text(header + "".join(lines), encoding="utf-8")
    licence = source.parent / "LICENSE"
    if licence.is_file():
        (out / "LICENSE").write_text(licence.read_text(encoding="utf-8"), encoding="utf-8")
    (out / "README.md").write_text(README, encoding="utf-8")
    counts = ", ".join(f"{k} {len(v)}" for k, v in tables.items())
    print(f"wrote {out}: {counts}; {len(tasks)} tasks; {len(domain['tools'])} tools")


# ---------------------------------------------------------------------------------------------
# the agreement check


def load_expected(source: Path) -> list[dict[str, Any]]:
    """tau2's own run of every task's gold calls (expected.jsonl), in task order."""
    text = (source / "expected.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


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
        res.tasks += 1
        with domain.episode(seed=0) as ep:
            for i, g in enumerate(rec["gold_calls"]):
                res.calls += 1
                try:
                    result, err, msg = ep.call(g["name"], g["arguments"]), False, None
                except ToolError as exc:
                    result, err, msg = None, True, str(exc)
                stat = res.by_tool.setdefault(g["name"], [0, 0, 0, 0])
                stat[0] += 1
                where = f"task {tid} call {i} {g['name']}"
                if err == g["error"]:
                    res.error_flag_ok += 1
                    stat[1] += 1
                else:
                    res.failures.append(
                        f"{where}: tau2 error={g['error']} ({g['output'][:80]}), toolgym error={err} ({msg})"
                    )
                if g["error"]:
                    res.errors += 1
                    if err and f"Error: {msg}" == g["output"]:
                        res.error_text_ok += 1
                    elif err and verbose:
                        res.failures.append(f"{where} error text: tau2 {g['output']!r}, toolgym {msg!r}")
                elif not err:
                    res.outputs += 1
                    stat[2] += 1
                    data = result == (g["output"] if isinstance(result, str) else _as_data(g["output"]))
                    if data:
                        res.outputs_data_ok += 1
                        stat[3] += 1
                    if _as_text(result) == g["output"]:
                        res.outputs_text_ok += 1
                    elif verbose:
                        diffs = _field_diff(_as_data(g["output"]), result) if not data else []
                        res.failures.append(
                            f"{where} output differs {'as text only' if data else 'as data'}: "
                            f"{'; '.join(diffs[:3]) or repr(g['output'][:80]) + ' vs ' + repr(_as_text(result)[:80])}"
                        )
            got = seed.changes(ep)
        if got == rec["changes"]:
            res.state_ok += 1
        else:
            diffs = _field_diff(rec["changes"], got)
            res.failures.append(f"task {tid} state differs: {'; '.join(diffs[:4])}")
    return res


def agree(source: Path, out: Path, only: list[str] | None, verbose: bool) -> int:
    res = check_agreement(source, out, only, verbose)
    for line in res.failures:
        print(line)
    print()
    print(f"{'tool':34} calls  error-agree  outputs-compared  outputs-agree")
    for name, (c, e, r, o) in sorted(res.by_tool.items()):
        print(f"{name:34} {c:5}  {e:11}  {r:16}  {o:13}")
    print(f"\nstate agreement: {res.state_ok}/{res.tasks} tasks")
    print(f"error agreement: {res.error_flag_ok}/{res.calls} gold calls")
    print(f"error text agreement (calls that fail in tau2): {res.error_text_ok}/{res.errors}")
    print(f"output agreement as data (calls that succeed on both sides): {res.outputs_data_ok}/{res.outputs}")
    print(
        f"output agreement as text (json.dumps of the result == tau2's output): {res.outputs_text_ok}/{res.outputs}"
    )
    ok = res.state_ok == res.tasks and res.error_flag_ok == res.calls and res.error_text_ok == res.errors
    return 0 if ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs="?", default="build", choices=["build", "agree"])
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="tau2 retail data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="domain folder to write / check")
    parser.add_argument("--task", action="append", help="agree: only these task ids")
    parser.add_argument(
        "--verbose", "-v", action="store_true", help="agree: also list output and error-text differences"
    )
    args = parser.parse_args(argv)
    if args.command == "build":
        build(args.source, args.out)
        return 0
    return agree(args.source, args.out, args.task, args.verbose)


if __name__ == "__main__":
    sys.exit(main())
