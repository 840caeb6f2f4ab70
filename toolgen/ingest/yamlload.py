"""Parse one spec file's bytes into Python data: JSON, JSON lines or YAML, with bounds.

YAML is parsed by `yaml_rs` (a YAML 1.2 parser) first, and by PyYAML's C loader when `yaml_rs`
rejects a document. Either way timestamps stay strings, a duplicate key keeps its last value, and
alias expansion is bounded by `MAX_EXPANDED_NODES`, so an alias bomb is refused.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml
import yaml_rs

#: Nodes a YAML document may have once its aliases are expanded.
MAX_EXPANDED_NODES = 5_000_000

_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class SpecLoader(_Base):
    """Safe loader: timestamps kept as strings, the `=` value tag accepted."""


SpecLoader.yaml_implicit_resolvers = {
    key: [(tag, rx) for (tag, rx) in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
SpecLoader.add_constructor("tag:yaml.org,2002:value", lambda loader, node: loader.construct_scalar(node))

_ANCHOR = re.compile(rb"(?:^|[\s\[{,:-])&[^\s,\[\]{}]")


class ParseError(ValueError):
    """The file is not valid JSON / YAML, or breaks a bound: the message says what and where."""


def _expanded_size(root: yaml.Node) -> int:
    """How many nodes `root` has with every alias expanded; refuses cycles and bombs."""
    sizes: dict[int, int] = {}
    on_stack: set[int] = set()
    # iterative post-order walk over the node graph (aliases are shared node objects)
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_stack.discard(key)
            total = 1
            if isinstance(node, yaml.SequenceNode):
                total += sum(sizes[id(child)] for child in node.value)
            elif isinstance(node, yaml.MappingNode):
                total += sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
            if total > MAX_EXPANDED_NODES:
                raise ParseError(f"YAML aliases expand past {MAX_EXPANDED_NODES:,} nodes (an alias bomb?)")
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_stack:
            mark = node.start_mark
            raise ParseError(f"recursive YAML alias at line {mark.line + 1}")
        on_stack.add(key)
        stack.append((node, True))
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        for child in children:
            if id(child) in on_stack:
                mark = child.start_mark
                raise ParseError(f"recursive YAML alias at line {mark.line + 1}")
            if id(child) not in sizes:
                stack.append((child, False))
    return sizes[id(root)]


def _load_yaml(text: str, data: bytes) -> Any:
    if not _ANCHOR.search(data):
        return yaml.load(text, Loader=SpecLoader)  # noqa: S506 - SpecLoader is a SafeLoader
    loader = SpecLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()


_RS_LIMITS = yaml_rs.AliasLimits(max_total_replayed_events=MAX_EXPANDED_NODES)


def _yaml(name: str, data: bytes, text: str) -> Any:
    try:
        return yaml_rs.loads(
            text,
            parse_datetime=False,
            duplicate_key_policy=yaml_rs.DuplicateKeyPolicy.LastWins,
            alias_limits=_RS_LIMITS,
        )
    except yaml_rs.YAMLDecodeError as exc:
        if "alias" in str(exc) and "limit" in str(exc):
            raise ParseError(
                f"YAML aliases expand past {MAX_EXPANDED_NODES:,} nodes (an alias bomb?)"
            ) from None
    except RecursionError:
        pass
    try:
        return _load_yaml(text, data)
    except yaml.YAMLError as exc:
        message = str(exc)
        if "tab" not in message and "control character" not in message:
            raise ParseError(f"invalid YAML: {_one_line(message)}") from None
    # libyaml rejects tabs on otherwise blank lines inside block scalars and C1 control
    # characters, which other YAML parsers accept: blank those and try once more
    fixed = re.sub(r"(?m)^[ \t]*\t[ \t]*$", "", text)
    fixed = re.sub(r"[\x80-\x9f]", " ", fixed)
    try:
        return _load_yaml(fixed, fixed.encode())
    except yaml.YAMLError as exc:
        raise ParseError(f"invalid YAML: {_one_line(str(exc))}") from None


def _one_line(message: str) -> str:
    return " ".join(message.split())[:300]


def parse_bytes(name: str, data: bytes) -> tuple[str, Any]:
    """Parse a file by its name's extension: ("json" | "jsonl" | "yaml", data).

    A `.json` file that is not one JSON document but several lines of JSON (BFCL's files) is
    read as JSON lines. Raises `ParseError` naming the line and column of the fault.
    """
    text = data.decode("utf-8-sig", errors="replace")
    low = name.lower()
    try:
        if low.endswith(".jsonl"):
            return "jsonl", _json_lines(text)
        if low.endswith(".json"):
            try:
                return "json", json.loads(text)
            except json.JSONDecodeError as first:
                lines = [line for line in text.splitlines() if line.strip()]
                if len(lines) > 1:
                    try:
                        return "jsonl", [json.loads(line) for line in lines]
                    except json.JSONDecodeError:
                        pass
                raise ParseError(f"invalid JSON: {first}") from None
        return "yaml", _yaml(name, data, text)
    except RecursionError:
        raise ParseError("nested too deeply to parse") from None


def _json_lines(text: str) -> list[Any]:
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise ParseError(f"invalid JSON on line {number}: {exc}") from None
    return out
