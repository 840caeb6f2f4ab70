"""The seed tables: tau2's nested db.json normalised into rows, and the table definitions.

Each user and each order owns a copy of its address (tau2 copies addresses, never shares them); lists
keep their order as a `position` column, so the exporter (export.py) can give tau2's shape back.
"""

from __future__ import annotations

from typing import Any

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
