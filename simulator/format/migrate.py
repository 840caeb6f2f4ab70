"""Rewriting a domain's old spellings to the new ones, in place, keeping everything else as written.

`check_domain` lists each old spelling in domain.yaml with its path (`Spelling`: `tools[3].operation[2]
.set.total.add[0]`, `get` -> `get_key`). `migrate(text, spellings)` finds each in the YAML's node tree
(PyYAML's composer keeps every node's place in the text) and replaces just the characters of that key
or value: comments, key order, quoting, flow or block style and blank lines stay exactly as they were.
A new spelling names the same operator or predicate as the old, so a migrated domain behaves
identically (tests/test_migrate.py replays every bundled domain's gold calls after migrating).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml

from .lint import Spelling

_TOOL_LABEL = re.compile(r"^(tools\[\d+\]) \([^)]*\)")
_SEGMENT = re.compile(r"\[(\d+)\]|([^.\[\]]+)")


@dataclass(frozen=True)
class Edit:
    """One replacement: characters `start:end` of the text become `new`."""

    start: int
    end: int
    old: str
    new: str


def segments(location: str) -> list[str | int]:
    """A location (`tools[3] (name).operation[2].set.x`) as keys and indexes: ['tools', 3, ...]."""
    path = _TOOL_LABEL.sub(r"\1", location)
    return [int(index) if index else key for index, key in _SEGMENT.findall(path)]


def _child(node: yaml.Node, part: str | int) -> yaml.Node | None:
    if isinstance(part, int):
        if isinstance(node, yaml.SequenceNode):
            return node.value[part] if part < len(node.value) else None
        # one step written without a list (`operation: {get: ...}`); one operand without a list
        return node if part == 0 else None
    entry = _entry(node, part)
    return entry[1] if entry else None


def _key_of(node: yaml.Node, name: str) -> yaml.ScalarNode | None:
    entry = _entry(node, name)
    return entry[0] if entry else None


def _entry(node: yaml.Node, name: str) -> tuple[yaml.ScalarNode, yaml.Node] | None:
    """The (key, value) nodes of a mapping's entry named `name`."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == name:
                return key, value
    return None


def locate(root: yaml.Node, spelling: Spelling) -> yaml.ScalarNode | None:
    """The scalar that spells `spelling.old` at its location: a value (`op: prefix`), the key of the
    operator mapping there (`{get: [...]}`), or else the key the path ends with (a step's key)."""
    parts = segments(spelling.at)
    node: yaml.Node | None = root
    for part in parts[:-1]:
        node = _child(node, part) if node is not None else None
    if node is None or not parts:
        return None
    last = parts[-1]
    target = _child(node, last)
    if isinstance(target, yaml.ScalarNode) and target.value == spelling.old:
        return target  # a value: `op: prefix`
    found = _key_of(target, spelling.old) if target is not None else None
    if found is None and last == spelling.old:
        found = _key_of(node, spelling.old)  # the key the path ends with: a step's own key
    return found


def plan(text: str, spellings: list[Spelling]) -> tuple[list[Edit], list[Spelling]]:
    """The edits that rewrite `spellings` in `text`, and the spellings that could not be found."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    edits: dict[int, Edit] = {}
    missed: list[Spelling] = []
    for spelling in spellings:
        node = locate(root, spelling) if root is not None else None
        if node is None:
            missed.append(spelling)
            continue
        start, end = node.start_mark.index, node.end_mark.index
        edits[start] = Edit(start, end, text[start:end], spelling.new)  # (an alias repeats a node)
    return sorted(edits.values(), key=lambda e: e.start), missed


def apply(text: str, edits: list[Edit]) -> str:
    """`text` with each edit made (edits do not overlap)."""
    out: list[str] = []
    last = 0
    for edit in edits:
        out.append(text[last : edit.start])
        out.append(edit.new)
        last = edit.end
    out.append(text[last:])
    return "".join(out)
