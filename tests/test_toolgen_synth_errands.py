"""Errands, batches and roundups: requests about related rows, said once, that pass validation."""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolgen.synth.errands import batches, errands, merged
from toolgen.synth.tasks import validate_candidates
from toolgen.synth.walks import Candidate, Proposer, Write

from .synth_kit import SHOP, make_op, planned_from
from .test_toolgen_synth_tasks import _world, _world_of

_DIR = {"directory_id": {"type": "string", "description": "the directory"}}
_CONTACT = {"contact_id": {"type": "string", "description": "the contact"}}
_FIELDS = {"email": {"type": "string"}, "last_name": {"type": "string"}}


def _directory_ops() -> list[Any]:
    directory = {"type": "object", "properties": {**_DIR, "name": {"type": "string"}}}
    contact = {"type": "object", "properties": {**_CONTACT, **_DIR, **_FIELDS}}
    return [
        make_op(
            "list_directories",
            "read",
            {"name": {"type": "string"}},
            entity="directory",
            record_schema=directory,
        ),
        make_op(
            "list_directory_contacts", "read", _DIR, ["directory_id"], entity="contact", record_schema=contact
        ),
        make_op("get_contact", "read", _CONTACT, ["contact_id"], entity="contact", record_schema=contact),
        make_op("update_contact", "update", {**_CONTACT, **_FIELDS}, ["contact_id"], entity="contact"),
        make_op("delete_contact", "delete", _CONTACT, ["contact_id"], entity="contact"),
    ]


def test_clauses_alike_but_for_their_row_are_said_once():
    def write(text: str, entity: str, phrase: str) -> Write:
        return Write(text, [], "t", {}, entity, phrase)

    writes = [
        write('delete the coupon whose name is "A"', "coupon", 'the coupon whose name is "A"'),
        write('rename the coupon whose name is "C" to "D"', "coupon", 'the coupon whose name is "C"'),
        write('delete the coupon whose name is "B"', "coupon", 'the coupon whose name is "B"'),
        write('close its ticket TIC-1, setting its note to "x"', "ticket", "its ticket TIC-1"),
        write('close its ticket TIC-2, setting its note to "x"', "ticket", "its ticket TIC-2"),
        write('close its ticket TIC-3, setting its note to "y"', "ticket", "its ticket TIC-3"),
    ]
    assert merged(writes) == [
        'delete the coupons whose names are "A" and "B"',
        'rename the coupon whose name is "C" to "D"',
        'close its tickets TIC-1 and TIC-2, setting its note to "x"',
        'close its ticket TIC-3, setting its note to "y"',
    ]
    scus = [write(f'delete the SCU whose name is "{n}"', "scu", f'the SCU whose name is "{n}"') for n in "AB"]
    assert merged(scus) == ['delete the SCUs whose names are "A" and "B"']  # (an acronym's too)


def _found(
    make: Callable[[int], Any], propose: Callable[[Proposer], list[Candidate]]
) -> list[tuple[Any, Candidate]]:
    """(world, candidate) for every candidate `propose` makes on the worlds of seeds 0-2; each
    candidate passes validation."""
    out = []
    for seed in range(3):
        world = make(seed)
        try:
            found = propose(Proposer(world, random.Random(seed)))
        finally:
            world.close()
        for c in found:
            kept, _ = validate_candidates(world.domain, [c])
            assert kept, c.instruction
            out.append((world, c))
    assert out
    return out


def test_an_errand_acts_on_the_rows_of_one_parent_found_by_its_name(tmp_path: Path):
    """`For the directory whose name is "X", please delete its contacts whose emails are ...`: the
    parent found by its name, its rows by one listing, every write on a row of that parent."""

    def make(seed: int) -> Any:
        return _world_of(*planned_from(*_directory_ops()), seed, tmp_path / f"d{seed}")[0]

    for world, c in _found(make, lambda p: errands(p, 4)):
        rows = world.rows
        assert c.kind == "errand"
        first, listing = c.calls[0], c.calls[1]
        assert first["name"] == "list_directories" and listing["name"] == "list_directory_contacts"
        owner = listing["arguments"]["directory_id"]
        name = next(r["name"] for r in rows["directories"] if r["directory_id"] == owner)
        assert f'the directory whose name is "{name}"' in c.instruction
        assert owner not in c.instruction
        for call in c.calls[2:]:  # each write on a contact of that directory
            row = next(r for r in rows["contacts"] if r["contact_id"] == call["arguments"]["contact_id"])
            assert row["directory_id"] == owner
            assert call["arguments"]["contact_id"] not in c.instruction
        assert " its contact" in c.instruction


def test_a_batch_makes_one_change_to_rows_named_by_what_a_person_knows(tmp_path: Path):
    """`Delete the users whose emails are "a", "b" and "c"`: one tool, the same values, each row
    found by its lookup; said as one clause."""
    for world, c in _found(
        lambda seed: _world(SHOP, seed, tmp_path / f"s{seed}")[0], lambda p: batches(p, 4)
    ):
        domain = world.domain
        writes = [call for call in c.calls if domain.tools[call["name"]].writes]
        assert len(writes) >= 3 and len({w["name"] for w in writes}) == 1
        key = {k for k in writes[0]["arguments"] if k.endswith("Id") or k.endswith("_id")}
        values = [{k: v for k, v in w["arguments"].items() if k not in key} for w in writes]
        assert all(v == values[0] for v in values)
        assert " whose " in c.instruction and " are " in c.instruction


def test_a_roundup_asks_one_value_of_several_rows_in_one_sentence(tmp_path: Path):
    for _, c in _found(lambda seed: _world(SHOP, seed, tmp_path / f"s{seed}")[0], lambda p: p.roundups(4)):
        assert c.kind == "roundup" and not re.search(r"[.?] [A-Z]", c.instruction)  # one sentence
        assert 3 <= len(c.answer_facts) <= 10


def test_rows_are_not_picked_by_who_a_person_is(tmp_path: Path):
    """`change the status of the ones with gender "male"`: no one picks contacts to act on by
    their gender; a status picks them."""
    from toolgen.synth.errands import _condition

    choice = {
        "gender": {"type": "string", "enum": ["male", "female"]},
        "status": {"type": "string", "enum": ["active", "inactive"]},
    }
    contact = {"type": "object", "properties": {**_CONTACT, **choice, "email": {"type": "string"}}}
    ops = [
        make_op("get_contact", "read", _CONTACT, ["contact_id"], entity="contact", record_schema=contact),
        make_op("update_contact", "update", {**_CONTACT, **choice}, ["contact_id"], entity="contact"),
        make_op("list_contacts", "read", {}, entity="contact", record_schema=contact),
    ]  # fmt: skip
    world = _world_of(*planned_from(*ops), 0, tmp_path / "d")[0]
    try:
        tool = next(t for t in world.tools if t.name == "update_contact")
        rows = [{**r, "gender": g, "status": s} for r, g, s in
                zip(world.rows["contacts"][:6], "male male female female male female".split(),
                    "active inactive active inactive active inactive".split(), strict=True)]  # fmt: skip
        picked = {
            _condition(Proposer(world, random.Random(seed)), tool.table, rows, None, tool)[0]  # type: ignore[index]
            for seed in range(20)
        }
    finally:
        world.close()
    assert picked == {"status"}, picked
