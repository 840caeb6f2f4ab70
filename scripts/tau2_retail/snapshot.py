"""The snapshot layout (domain.yaml's `snapshot:`): the tables nested back into tau2's db.json shape.

`toolgym export tau2-retail --format snapshot` writes db.json from it; tests/test_snapshot.py checks
that the seed gives db.json back. The port keeps no order for orders and products, so those two
collections come out in key order (users keep tau2's order through `position`).
"""

from __future__ import annotations

from typing import Any

from .tables import ADDRESS_FIELDS, ORDER_OPTIONAL


def _address() -> dict[str, Any]:
    """A user's or an order's own address row (a fresh dict each time: no YAML anchors)."""
    return {"table": "addresses", "via": "address_id", "fields": {f: f for f in ADDRESS_FIELDS}}


def _children(table: str, parent: str, fields: tuple[str, ...], as_: str = "list") -> dict[str, Any]:
    return {
        "table": table,
        "parent": parent,
        "as": as_,
        "order": "position",
        "fields": {f: f for f in fields},
    }


SNAPSHOT: dict[str, Any] = {
    "indent": 4,
    "collections": {
        "products": {
            "table": "products",
            "fields": {
                "name": "name",
                "product_id": "product_id",
                "variants": _children(
                    "variants", "product_id", ("item_id", "options", "available", "price"), as_="map"
                ),
            },
        },
        "users": {
            "table": "users",
            "order": "position",
            "fields": {
                "user_id": "user_id",
                "name": {"fields": {"first_name": "first_name", "last_name": "last_name"}},
                "address": _address(),
                "email": "email",
                "payment_methods": {
                    "table": "payment_methods",
                    "parent": "user_id",
                    "as": "map",
                    "order": "position",
                    "fields": {
                        "source": "source",
                        "id": "payment_method_id",
                        "brand": "brand",
                        "last_four": "last_four",
                        "balance": "balance",
                    },
                    "omit_null": True,  # a card has brand and last four, a gift card a balance
                },
                "orders": {
                    "table": "orders",
                    "parent": "user_id",
                    "as": "list",
                    "order": "user_position",
                    "value": "order_id",
                },
            },
        },
        "orders": {
            "table": "orders",
            "fields": {
                "order_id": "order_id",
                "user_id": "user_id",
                "address": _address(),
                "items": _children(
                    "order_items", "order_id", ("name", "product_id", "item_id", "price", "options")
                ),
                "status": "status",
                "fulfillments": _children("fulfillments", "order_id", ("tracking_id", "item_ids")),
                "payment_history": _children(
                    "payment_history", "order_id", ("transaction_type", "amount", "payment_method_id")
                ),
                **{f: f for f in ORDER_OPTIONAL},
            },
            "omit_null": list(ORDER_OPTIONAL),  # db.json has them only once a write sets them
        },
    },
}
