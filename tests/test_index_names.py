"""Index names SQLite would collide on: `ix_{table}_{column}` is both t_a.b's and t.a_b's name, and
tables and indexes share one namespace (ignoring case). The second such index gets `_2`; a domain
without a collision keeps its names (the fingerprint and golden-replay tests pin those)."""

from __future__ import annotations

import sqlalchemy as sa

from scoring import load_domain
from simulator.plan.tables import index_name
from tests.test_loader import copy_shop, edit_yaml

REF = {"type": "string", "nullable": True, "references": "customers.customer_id"}


def _colliding(raw: dict) -> None:
    raw["tables"]["t_a"] = {"primary_key": "id", "columns": {"id": {"type": "string"}, "b": REF}}
    raw["tables"]["t"] = {"primary_key": "id", "columns": {"id": {"type": "string"}, "a_b": REF}}
    raw["tables"]["IX_U_C"] = {"primary_key": "id", "columns": {"id": {"type": "string"}}}
    raw["tables"]["u"] = {"primary_key": "id", "columns": {"id": {"type": "string"}, "c": REF}}


def test_colliding_index_names_are_made_distinct_and_the_episode_opens(tmp_path):
    folder = copy_shop(tmp_path)
    edit_yaml(folder, _colliding)
    domain = load_domain(folder)
    with domain.episode() as ep:
        rows = ep.conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'").fetchall()
        names = {tbl: name for name, tbl in rows if name.startswith("ix_") and tbl in ("t_a", "t", "u")}
        assert names == {"t_a": "ix_t_a_b", "t": "ix_t_a_b_2", "u": "ix_u_c_2"}
        ep.conn.execute("SELECT count(*) FROM t").fetchone()  # (the schema is whole)


def test_a_name_nothing_else_holds_is_kept():
    metadata = sa.MetaData()
    sa.Table("orders", metadata, sa.Column("customer_id", sa.String))
    assert index_name(metadata, ["orders"], "orders", "customer_id") == "ix_orders_customer_id"
