"""OpenAPI 3.0 / 3.1 and Swagger 2.0 documents → `RawOperation`s.

One operation per path × HTTP method (3.1 `webhooks` are not operations). Only what an operation
uses is resolved — its parameters, request body and first 2xx response — through the lazy
`Resolver` (refs.py); the rest of the document is never walked or validated. A `$ref` that
cannot be followed is reported as a problem of that operation (with its JSON pointer); the
operation is kept with what could be read.
"""

from __future__ import annotations

from typing import Any

from toolgen.ingest.declared import http_declared
from toolgen.ingest.refs import RefError, Resolver, Sibling
from toolgen.model import Parameter, RawOperation, SourceFormat

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_LOCATIONS = {"path", "query", "header", "cookie", "body", "formData"}
_SWAGGER_SCHEMA_KEYS = (
    "type", "format", "items", "enum", "default", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems",
    "multipleOf",
)  # fmt: skip


def spec_format(doc: Any) -> SourceFormat | None:
    """The OpenAPI flavour of a parsed document, or None when it is not an OpenAPI document."""
    if not isinstance(doc, dict):
        return None
    if "swagger" in doc and str(doc.get("swagger")).startswith("2"):
        return "swagger-2.0"
    version = doc.get("openapi")
    if version is None:
        return None
    version = str(version)
    if version.startswith("3.0") or not version.startswith("3"):
        return "openapi-3.0"
    return "openapi-3.1"


def escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _pick_media(content: Any) -> Any:
    """The schema node of the JSON media type of a `content` map (else form, else the first)."""
    if not isinstance(content, dict) or not content:
        return None
    keys = [k for k in content if isinstance(k, str)]
    ranked = sorted(
        keys,
        key=lambda k: (
            0 if "json" in k.lower() else 1 if "form" in k.lower() else 2 if k.startswith("*/") else 3,
            keys.index(k),
        ),
    )
    media = content.get(ranked[0]) if ranked else None
    return media.get("schema") if isinstance(media, dict) else None


class _OpReader:
    def __init__(self, source: str, doc: dict[str, Any], fmt: SourceFormat, sibling: Sibling | None):
        self.source = source
        self.doc = doc
        self.fmt = fmt
        self.resolver = Resolver(doc, sibling)
        info = doc.get("info")
        info = info if isinstance(info, dict) else {}
        title = _text(info.get("title")).strip()
        self.api = title or source.rsplit("/", 1)[-1]
        self.problems: list[tuple[str, str]] = []

    def problem(self, pointer: str, message: str) -> None:
        self.problems.append((pointer, message))

    def operations(self) -> list[RawOperation]:
        paths = self.doc.get("paths")
        out: list[RawOperation] = []
        if not isinstance(paths, dict):
            return out
        for path, raw_item in paths.items():
            item_ptr = f"/paths/{escape(str(path))}"
            try:
                item, item_base = self.resolver.deref(raw_item, "")
            except RefError as exc:
                self.problem(item_ptr, str(exc))
                continue
            if not isinstance(item, dict):
                continue
            for method in HTTP_METHODS:
                if method not in item:
                    continue
                pointer = f"{item_ptr}/{method}"
                try:
                    op, op_base = self.resolver.deref(item[method], item_base)
                except RefError as exc:
                    self.problem(pointer, str(exc))
                    op, op_base = {}, item_base
                if not isinstance(op, dict):
                    op = {}
                out.append(self.operation(str(path), method, pointer, item, item_base, op, op_base))
        return out

    def operation(
        self, path: str, method: str, pointer: str, item: dict[str, Any], item_base: str,
        op: dict[str, Any], op_base: str,
    ) -> RawOperation:  # fmt: skip
        problems: list[str] = []
        params: dict[tuple[str, str], Parameter] = {}
        request_schema: Any = None
        request_name: str | None = None
        for index, (raw, base) in enumerate(
            [(p, item_base) for p in _as_list(item.get("parameters"))]
            + [(p, op_base) for p in _as_list(op.get("parameters"))]
        ):
            try:
                param, param_base = self.resolver.deref(raw, base)
            except RefError as exc:
                self.problem(f"{pointer}/parameters/{index}", f"parameter skipped: {exc}")
                continue
            if not isinstance(param, dict) or not isinstance(param.get("name"), str):
                continue
            location = param.get("in")
            if location == "body":  # Swagger 2.0 body parameter: the request body
                request_name = self.resolver.ref_name(param.get("schema"))
                request_schema = self.resolver.schema(param.get("schema") or {}, param_base, problems)
                continue
            if location not in _LOCATIONS:
                continue
            params[(param["name"], location)] = Parameter(
                name=param["name"],
                location=location,
                required=bool(param.get("required")) or location == "path",
                description=_text(param.get("description")),
                schema=self._param_schema(param, param_base, problems),
            )
        body = op.get("requestBody")
        if body is not None:
            try:
                body, body_base = self.resolver.deref(body, op_base)
                media = _pick_media(body.get("content")) if isinstance(body, dict) else None
                if media is not None:
                    request_name = self.resolver.ref_name(media)
                    request_schema = self.resolver.schema(media, body_base, problems)
            except RefError as exc:
                problems.append(f"request body: {exc}")
        response_schema, response_name = self._response(op, op_base, problems)
        for message in problems:
            self.problem(pointer, message)
        operation_id = op.get("operationId")
        tags = [t for t in _as_list(op.get("tags")) if isinstance(t, str)]
        declared, declared_by = http_declared(method, path)
        return RawOperation.model_construct(
            source=self.source,
            pointer=pointer,
            format=self.fmt,
            api=self.api,
            method=method,
            path=path,
            operation_id=operation_id if isinstance(operation_id, str) else None,
            summary=_text(op.get("summary")),
            description=_text(op.get("description")),
            tags=tags,
            parameters=list(params.values()),
            input_schema=None,
            request_schema=request_schema if isinstance(request_schema, dict) else None,
            request_schema_name=request_name,
            response_schema=response_schema if isinstance(response_schema, dict) else None,
            response_schema_name=response_name,
            declared=declared,
            declared_by=declared_by,
        )

    def _param_schema(self, param: dict[str, Any], base: str, problems: list[str]) -> dict[str, Any]:
        if "schema" in param:
            schema = self.resolver.schema(param["schema"], base, problems)
        elif "content" in param:
            schema = self.resolver.schema(_pick_media(param["content"]) or {}, base, problems)
        else:  # Swagger 2.0: the schema keywords sit on the parameter itself
            schema = self.resolver.schema(
                {k: param[k] for k in _SWAGGER_SCHEMA_KEYS if k in param}, base, problems
            )
        return schema if isinstance(schema, dict) else {}

    def _response(self, op: dict[str, Any], base: str, problems: list[str]) -> tuple[Any, str | None]:
        responses = op.get("responses")
        if not isinstance(responses, dict):
            return None, None
        codes = sorted(str(code) for code in responses if str(code).startswith("2"))
        for code in codes:
            raw = responses.get(code, responses.get(int(code)) if code.isdigit() else None)
            try:
                response, response_base = self.resolver.deref(raw, base)
            except RefError as exc:
                problems.append(f"response {code}: {exc}")
                continue
            if not isinstance(response, dict):
                continue
            node = (
                response.get("schema") if self.fmt == "swagger-2.0" else _pick_media(response.get("content"))
            )
            if node is not None:
                return self.resolver.schema(node, response_base, problems), self.resolver.ref_name(node)
        return None, None


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def read_openapi(
    source: str, doc: dict[str, Any], fmt: SourceFormat, sibling: Sibling | None
) -> tuple[list[RawOperation], list[tuple[str, str]]]:
    """The operations of an OpenAPI document, and its problems as (JSON pointer, message)."""
    reader = _OpReader(source, doc, fmt, sibling)
    return reader.operations(), reader.problems
