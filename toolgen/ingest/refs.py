"""A lazy `$ref` resolver over one spec and its sibling files.

It resolves only what an operation uses (its parameters, request body and success response):
local pointers and relative references to sibling files, each relative to the file it is
written in. Expansions are memoised and shared; a reference to itself, or nesting past
`max_depth`, is cut to a node naming the target. A reference that cannot be followed raises
`RefError`.
Design notes: docs/design/toolgen.md.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any
from urllib.parse import unquote

from toolgen.ingest.yamlload import ParseError, parse_bytes

#: Reads a sibling file by its path relative to the entry file's folder, or None when absent.
Sibling = Callable[[str], bytes | None]

#: Nested `$ref` expansions kept in one schema before the rest is cut.
MAX_REF_DEPTH = 2
#: Plain (non-$ref) nesting kept in one schema before the rest is cut.
MAX_NESTING = 64


def _shallow(target: Any, ref: str) -> dict[str, Any]:
    """A target past the depth bound: its own scalar words (type, format, pattern, a list of
    plain values such as `enum`), none of what nests in it, so a `string` stays a string."""
    if not isinstance(target, dict):
        return {"description": f"{ref} (not expanded: depth bound)"}
    kept = {
        k: list(v) if isinstance(v, list) else v  # (a copy: the spec's own list is shared)
        for k, v in target.items()
        if k != "$ref"
        and (
            not isinstance(v, dict | list)
            or isinstance(v, list)
            and all(x is None or isinstance(x, str | int | float | bool) for x in v)
        )
    }
    if kept.get("type") in ("object", "array") or "type" not in kept:
        kept["description"] = f"{ref} (not expanded: depth bound)"
    return kept


class RefError(ValueError):
    """A `$ref` that cannot be followed: dangling, malformed, or to a file that is not there."""


def _pointer_parts(pointer: str) -> list[str]:
    if pointer in ("", "/"):
        return []
    if not pointer.startswith("/"):
        raise RefError(f"malformed JSON pointer {pointer!r}")
    return [unquote(part).replace("~1", "/").replace("~0", "~") for part in pointer[1:].split("/")]


class Resolver:
    """Resolves references in the documents of one spec; `""` names the entry document."""

    def __init__(self, root: Any, sibling: Sibling | None = None, *, max_depth: int = MAX_REF_DEPTH):
        self.docs: dict[str, Any] = {"": root}
        self.sibling = sibling
        self.max_depth = max_depth
        self._memo: dict[tuple[str, str, int], Any] = {}
        self._missing: dict[str, str] = {}

    def _doc(self, path: str) -> Any:
        if path in self.docs:
            return self.docs[path]
        if path in self._missing:
            raise RefError(self._missing[path])
        try:
            if self.sibling is None:
                raise RefError(f"file {path!r} is not available (no sibling files for this input)")
            data = self.sibling(path)
            if data is None:
                raise RefError(f"file {path!r} not found beside the spec")
            try:
                doc = parse_bytes(path, data)[1]
            except ParseError as exc:
                raise RefError(f"file {path!r}: {exc}") from None
        except RefError as exc:
            self._missing[path] = str(exc)
            raise
        self.docs[path] = doc
        return doc

    def target(self, ref: str, base: str) -> tuple[str, str]:
        """The (document, pointer) a `$ref` written in document `base` names."""
        file_part, _, pointer = ref.partition("#")
        if file_part:
            if "://" in file_part:
                raise RefError(f"remote $ref {ref!r} is not followed")
            doc = posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(file_part)))
            if doc.startswith("../") or doc == ".." or doc.startswith("/"):
                raise RefError(f"$ref {ref!r} leaves the spec's folder")
            doc = "" if doc == "." else doc
        else:
            doc = base
        return doc, pointer

    def lookup(self, doc: str, pointer: str) -> Any:
        node = self._doc(doc)
        for part in _pointer_parts(pointer):
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                where = doc or "this file"
                raise RefError(f"$ref target #{pointer} not found in {where}")
        return node

    def deref(self, node: Any, base: str) -> tuple[Any, str]:
        """Follow `node`'s `$ref` chain (if any): the target and the document it lives in."""
        seen: set[tuple[str, str]] = set()
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            key = self.target(node["$ref"], base)
            if key in seen:
                raise RefError(f"$ref {node['$ref']!r} refers to itself")
            seen.add(key)
            node, base = self.lookup(*key), key[0]
        return node, base

    def ref_name(self, node: Any) -> str | None:
        """The component name a `$ref` points at (its pointer's last segment), if `node` is one."""
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            tail = ref.rsplit("/", 1)[-1] if "#" in ref else posixpath.basename(ref)
            tail = tail.rsplit(".", 1)[0] if "#" not in ref else tail
            return unquote(tail).replace("~1", "/").replace("~0", "~") or None
        return None

    def schema(self, node: Any, base: str, problems: list[str] | None = None) -> Any:
        """`node` with every `$ref` inside expanded (bounded); unresolvable ones are replaced
        by a description and told to `problems` when given, else raise `RefError`."""
        return self._expand(node, base, self.max_depth, (), 0, problems)

    def _expand(
        self,
        node: Any,
        base: str,
        depth: int,
        stack: tuple[tuple[str, str], ...],
        nesting: int,
        problems: list[str] | None,
    ) -> Any:
        if nesting > MAX_NESTING:
            return {"description": "(nested too deeply: cut)"}
        if isinstance(node, list):
            return [self._expand(x, base, depth, stack, nesting + 1, problems) for x in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            try:
                key = self.target(ref, base)
            except RefError as exc:
                return self._unresolved(ref, exc, problems)
            if key in stack:
                return {"description": f"recursive reference to {ref} (cut)"}
            memo_key = (key[0], key[1], depth)
            if memo_key in self._memo:
                return self._memo[memo_key]
            try:
                target = self.lookup(*key)  # checked even when not expanded: a dangling $ref is told
            except RefError as exc:
                return self._unresolved(ref, exc, problems)
            if depth <= 0:
                return _shallow(target, ref)
            result = self._expand(target, key[0], depth - 1, (*stack, key), nesting + 1, problems)
            self._memo[memo_key] = result
            return result
        return {
            k: (
                self._expand(v, base, depth, stack, nesting + 1, problems)
                if isinstance(v, dict | list)
                else v
            )
            for k, v in node.items()
        }

    @staticmethod
    def _unresolved(ref: str, exc: RefError, problems: list[str] | None) -> dict[str, str]:
        if problems is None:
            raise exc
        problems.append(f"unresolved $ref {ref!r}: {exc}")
        return {"description": f"unresolved $ref {ref}"}
