"""toolgen.normalize: names, ids, merged input schemas, entities and kinds, on hand-made and generated operations."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolgen.ingest import read_paths
from toolgen.model import Parameter, RawOperation
from toolgen.normalize import normalize

from .conftest import shared_file

NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PROPERTY = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")


def openapi(
    method: str, path: str, *params: Parameter, pointer: str | None = None, **kw: Any
) -> RawOperation:
    return RawOperation(
        source=kw.pop("source", "shop.yaml"),
        pointer=pointer or f"/paths/{path.replace('/', '~1')}/{method}",
        format="openapi-3.0",
        api=kw.pop("api", "Shop API"),
        method=method,
        path=path,
        parameters=list(params),
        **kw,
    )


def function(name: str | None, index: int, **kw: Any) -> RawOperation:
    return RawOperation(
        source=kw.pop("source", "tools.json"),
        pointer=f"/{index}",
        format=kw.pop("format", "openai-tools"),
        api=kw.pop("api", "Tools"),
        operation_id=name,
        **kw,
    )


def p(name: str, location: str, **kw: Any) -> Parameter:
    return Parameter(name=name, location=location, **kw)  # type: ignore[arg-type]


def one(raw: RawOperation) -> Any:
    ops, skipped = normalize([raw])
    assert skipped == [] and len(ops) == 1
    return ops[0]


def test_nested_action_path_merges_parameters_renames_clashes_and_drops_headers() -> None:
    op = one(
        openapi(
            "post",
            "/v1/users/{user_id}/orders/{orderId}/cancel",
            p("user_id", "path", required=True, schema={"type": "string"}),
            p("orderId", "path", required=True, schema={"type": "integer"}),
            p("id", "query", schema={"type": "string"}),
            p("Authorization", "header"),
            p("Content-Type", "header"),
            p("X-Tenant", "header", schema={"type": "string"}),
            p("X-Amz-Content-Sha256", "header", schema={"type": "string"}),
            p("X-Amz-SignedHeaders", "header", schema={"type": "string"}),
            p("X-Amz-Date", "header", schema={"type": "string"}),
            p("X-Amz-Security-Token", "header", schema={"type": "string"}),
            p("x-apideck-app-id", "header", required=True, schema={"type": "string"}),
            p("xero-tenant-id", "header", required=True, schema={"type": "string"}),
            p("x-apideck-consumer-id", "header", required=True, schema={"type": "string"}),
            p(
                "X-Amz-Target",
                "header",
                required=True,
                schema={"type": "string", "enum": ["Svc.CancelOrder"]},
            ),
            p("filter[status]", "query"),
            request_schema={"type": "object", "properties": {"id": {"type": "string"}, "reason": {}}},
        )
    )
    assert (op.entity, op.kind) == ("order", "action")
    assert op.name == "cancel_users_orders"
    props = op.input_schema["properties"]
    assert list(props) == ["user_id", "orderId", "id", "filter_status", "X-Tenant", "body_id", "reason"]
    assert op.input_schema["required"] == ["user_id", "orderId"]
    assert {d["name"]: d["reason"].split(":")[0] for d in op.dropped} == {
        "Authorization": "credential header",
        "Content-Type": "transport header",
        "X-Amz-Content-Sha256": "signing header",
        "X-Amz-SignedHeaders": "signing header",
        "X-Amz-Date": "transport header",
        "X-Amz-Security-Token": "credential header",
        "x-apideck-app-id": "caller header",
        "xero-tenant-id": "tenant header",
        "x-apideck-consumer-id": "tenant header",
        "X-Amz-Target": "fixed header",
    }
    assert {(r["from"], r["to"]) for r in op.renamed} == {
        ("id", "body_id"),
        ("filter[status]", "filter_status"),
    }
    assert "clashes with the query parameter" in next(r["reason"] for r in op.renamed if r["to"] == "body_id")
    assert op.consumes == ["order", "user"]
    assert op.path_prefix == "/v1/users"


@pytest.mark.parametrize(
    ("method", "path", "entity", "kind"),
    [
        ("get", "/pets", "pet", "read"),
        ("get", "/pets/{petId}", "pet", "read"),
        ("post", "/pets", "pet", "create"),
        ("put", "/pets/{petId}", "pet", "update"),
        ("patch", "/store/order-items/{id}", "order_item", "update"),
        ("delete", "/users/{id}/orders/{orderId}", "order", "delete"),
        ("post", "/orders/{id}", "order", "update"),
        ("post", "/v2/users/search", "user", "read"),
        ("get", "/2010-04-01/Accounts/{AccountSid}/Messages.json", "message", "read"),
        ("post", "/chat.postMessage", "message", "create"),
        ("get", "/conversations.list", "conversation", "read"),
        ("post", "/#X-Amz-Target=DynamoDB_20120810.CreateTable", "table", "create"),
        ("get", "/#Action=DeleteUser&Version=2010-05-08", "user", "delete"),
        ("post", "/v1/projects/{project}/instances:batchCreate", "instance", "create"),
        ("post", "/v1/{name}:cancel", "operation", "action"),
        ("get", "/apis/apps.k8s.io/v1/deployments", "deployment", "read"),
        ("get", "/categories", "category", "read"),
        ("get", "/v1/radar/value_lists/{value_list}", "value_list", "read"),
        ("put", "/order-is-ready-for-pickup", "order", "update"),
        ("get", "/{source}/datasets/{dataset_id}/exports/csv", "dataset", "read"),
        ("get", "/{source}/datasets/{dataset_id}/exports/geojson", "dataset", "read"),
        ("get", "/Content/GetContentById/{id}/{locale}/", "content", "read"),
        ("post", "/guilds/{guild_id}/prune", "guild", "action"),
        ("get", "/responses/{response_id}?beta=true", "response", "read"),
        ("delete", "/webhooks/{id}/{token}/messages/@original", "message", "delete"),
        ("get", "/screenshot/info", "screenshot", "read"),
        ("get", "/CommunityContent/Get/{sort}/{page}/", "community_content", "read"),
        ("post", "/GroupV2/{groupId}/Members/{id}/SetMembershipType/{type}/", "membership_type", "update"),
        ("get", "/anonymization/keys/{id}", "anonymization_key", "read"),
        # which kind of the collection before it: a local phone number, no `create a new local`
        (
            "post",
            "/Accounts/{AccountSid}/IncomingPhoneNumbers/Local.json",
            "local_incoming_phone_number",
            "create",
        ),
        (
            "get",
            "/AvailablePhoneNumbers/{CountryCode}/TollFree.json",
            "toll_free_available_phone_number",
            "read",
        ),
        ("get", "/users/{id}/keys", "key", "read"),
        ("get", "/users/keys", "key", "read"),
    ],
)
def test_entity_and_kind_from_the_path(method: str, path: str, entity: str, kind: str) -> None:
    op = one(openapi(method, path, tags=["Operations"]))
    assert (op.entity, op.kind) == (entity, kind)


@pytest.mark.parametrize(
    ("name", "tool", "entity", "kind"),
    [
        ("getWeatherForecast", "get_weather_forecast", "weather_forecast", "read"),
        ("search_flights", "search_flights", "flight", "read"),
        ("createOrder", "create_order", "order", "create"),
        ("getOrderById", "get_order_by_id", "order", "read"),
        ("Spotify.play", "spotify_play", "spotify", "action"),
        ("math.factorial", "math_factorial", "factorial", "read"),
        ("delete_file", "delete_file", "file", "delete"),
        ("cancel_reservation", "cancel_reservation", "reservation", "action"),
        ("order_create", "order_create", "order", "create"),
        ("update_user_details", "update_user_details", "user", "update"),
        (
            "get_current_and_future_temperature",
            "get_current_and_future_temperature",
            "future_temperature",
            "read",
        ),
        ("List a project's jobs", "list_a_project_jobs", "project_job", "read"),
        ("créer_réservation", "creer_reservation", "creer_reservation", "read"),
        ("Sign Info", "sign_info", "sign", "read"),
        ("Video no watermark", "video_no_watermark", "video", "read"),
        ("search_food_item_100_g_serving", "search_food_item_100_g_serving", "food_item", "read"),
        ("Semaphore.tryAcquireAsync", "semaphore_try_acquire_async", "semaphore", "action"),
        ("spaces.completeImport", "spaces_complete_import", "space", "action"),
        ("isbehindcdn", "isbehindcdn", "tool", "read"),
        ("gets_products", "gets_products", "product", "read"),
        ("tweet_detail_conversation", "tweet_detail_conversation", "tweet_conversation", "read"),
        ("vivanews_detail", "vivanews_detail", "vivanews", "read"),
        ("get_detailed_cake_recipe", "get_detailed_cake_recipe", "cake_recipe", "read"),
        ("album_metadata", "album_metadata", "album", "read"),
        ("add_page_break", "add_page_break", "page_break", "create"),  # (a page break, no `new break`)
        ("event_create_trigger", "event_create_trigger", "trigger", "create"),  # (no `create a new event`)
    ],
)
def test_function_names(name: str, tool: str, entity: str, kind: str) -> None:
    op = one(function(name, 0))
    assert (op.name, op.entity, op.kind) == (tool, entity, kind)


def test_odd_names_are_valid_unique_and_stable() -> None:
    raws = [
        function("Spotify.play", 0),
        function("Spotify.play", 1),
        function("spotify_play", 2),
        function("日本語", 3),
        function(None, 4),
        function("x" * 100, 5),
        function("x" * 100 + "y", 6),
        function("a b  c", 7),
        function("get-weather.v2", 8),
    ]
    ops, skipped = normalize(raws)
    assert skipped == []
    names = [o.name for o in ops]
    assert all(NAME.match(n) for n in names), names
    assert len(set(names)) == len(names)
    assert names[:3] == ["spotify_play", "spotify_play_2", "spotify_play_3"]
    assert len({o.id for o in ops}) == len(ops)
    # any order in, the same result out
    shuffled = raws[:]
    random.Random(3).shuffle(shuffled)
    assert normalize(shuffled) == (ops, skipped)


def test_a_duplicate_source_and_pointer_is_skipped_with_the_first_named() -> None:
    raw = openapi("get", "/pets")
    ops, skipped = normalize([raw, raw])
    assert len(ops) == 1 and len(skipped) == 1
    assert ops[0].id in skipped[0].reason and skipped[0].id != ops[0].id


def test_a_webhook_the_api_calls_on_its_client_is_skipped_with_why() -> None:
    """Just Eat's `/acceptance-requested`: "This webhook will be invoked whenever ...": the API
    calls it on the restaurant's server; no agent calls it (no `create a new acceptance`)."""
    hook = openapi(
        "post",
        "/acceptance-requested",
        description="This webhook will be invoked whenever acceptance has been requested.",
    )
    managed = openapi(
        "post", "/webhooks", description="Create a webhook; the webhook is called on each event you pick."
    )
    ops, skipped = normalize([hook, managed])
    assert [o.pointer for o in ops] == ["/paths/~1webhooks/post"]
    assert len(skipped) == 1 and "webhook the API calls" in skipped[0].reason


def test_function_schema_python_types_become_json_schema_and_records_and_ids() -> None:
    op = one(
        function(
            "book_flight",
            0,
            format="bfcl",
            input_schema={
                "type": "dict",
                "properties": {
                    "flight_id": {"type": "string"},
                    "options": {
                        "type": "dict",
                        "properties": {"price": {"type": "float"}, "n": {"type": "any"}},
                    },
                    "stops": {"type": "tuple", "items": {"type": "integer"}},
                },
                "required": ["flight_id"],
            },
            response_schema={"type": "object", "properties": {"id": {}, "passenger_id": {}, "next_id": {}}},
        )
    )
    props = op.input_schema["properties"]
    assert props["options"] == {"type": "object", "properties": {"price": {"type": "number"}, "n": {}}}
    assert props["stops"]["type"] == "array"
    assert op.input_schema["required"] == ["flight_id"]
    assert (op.entity, op.kind) == ("flight", "create")
    assert op.consumes == ["flight"]
    assert op.produces == ["flight", "passenger"]


def test_record_schema_from_response_items_or_create_body() -> None:
    item = {"type": "object", "properties": {"id": {"type": "integer"}, "name": {}}}
    listed = one(openapi("get", "/pets", response_schema={"type": "array", "items": item}))
    assert listed.record_schema == item and listed.produces == ["pet"]
    body = {"type": "object", "properties": {"name": {"type": "string"}}}
    created = one(openapi("post", "/pets", request_schema=body))
    assert created.record_schema == body
    assert created.input_schema["properties"] == {"name": {"type": "string"}}
    scalar = one(openapi("post", "/upload", request_schema={"type": "string", "format": "binary"}))
    assert scalar.input_schema["properties"] == {"body": {"type": "string", "format": "binary"}}


def test_a_status_envelope_gives_its_payload_as_the_record() -> None:
    """Bungie's `{Response, ErrorCode, ErrorStatus, Message, MessageData, ThrottleSeconds}`: the
    record is what `Response` holds, not how the call went; a scalar payload is no record."""
    stat = {"type": "object", "properties": {"mode": {"type": "integer"}, "value": {"type": "number"}}}
    status = {
        "ErrorCode": {"type": "integer"},
        "ErrorStatus": {"type": "string"},
        "Message": {"type": "string"},
        "MessageData": {"type": "object", "additionalProperties": {"type": "string"}},
        "ThrottleSeconds": {"type": "integer"},
    }
    listed = {"type": "object", "properties": {"Response": {"type": "array", "items": stat}, **status}}
    op = one(openapi("get", "/Stats/AggregateClanStats/{groupId}/", response_schema=listed))
    assert op.record_schema == stat
    done = {"type": "object", "properties": {"Response": {"type": "boolean"}, **status}}
    assert one(openapi("post", "/Clans/{id}/Approve/", response_schema=done)).record_schema == {
        "type": "boolean"
    }
    said = {"type": "object", "properties": {"message": {"type": "string"}}}
    assert one(openapi("delete", "/dataset/{pk}", response_schema=said)).record_schema == {
        "type": "object",
        "properties": {},
    }
    kept = {"type": "object", "properties": {"data": {"type": "object"}, "owner": {"type": "string"}}}
    assert one(openapi("get", "/pets/{id}", response_schema=kept)).record_schema == kept


def test_records_wrapped_with_links_are_the_records() -> None:
    """OpenDataSoft's `{total_count, links, datasets: [{links, dataset}]}` and `{links, dataset}`."""
    dataset = {
        "type": "object",
        "properties": {"dataset_id": {"type": "string"}, "metas": {"type": "object"}},
    }
    links = {"type": "array", "items": {"type": "object", "properties": {"href": {"type": "string"}}}}
    wrapped = {"type": "object", "properties": {"links": links, "dataset": dataset}}
    page = {
        "type": "object",
        "properties": {
            "total_count": {"type": "integer"},
            "links": links,
            "datasets": {"type": "array", "items": wrapped},
        },
    }
    assert one(openapi("get", "/datasets", response_schema=page)).record_schema == dataset
    assert one(openapi("get", "/datasets/{dataset_id}", response_schema=wrapped)).record_schema == dataset
    two = {"type": "object", "properties": {"links": links, "a": dataset, "b": dataset}}
    assert one(openapi("get", "/pairs/{pair_id}", response_schema=two)).record_schema == two


# --- properties -------------------------------------------------------------------------------

_LOCATIONS = ["path", "query", "header", "cookie", "body", "formData"]
_names = st.one_of(
    st.sampled_from(
        ["id", "Id", "user_id", "Authorization", "Accept", "X-Api-Key", "$top", "filter[a]", "名前"]
    ),
    st.text(min_size=0, max_size=80),
)
_params = st.builds(
    lambda n, loc, req: Parameter(name=n, location=loc, required=req, schema={"type": "string"}),
    _names,
    st.sampled_from(_LOCATIONS),
    st.booleans(),
)
_segment = st.one_of(
    st.sampled_from(
        ["users", "{id}", "{userId}", "v1", "orders", "cancel", "a.b", "x:y", "#Action=Do", "{}", ""]
    ),
    st.text(max_size=12).filter(lambda s: "/" not in s),
)
_openapi_ops = st.builds(
    lambda method, segs, params, op_id, tags: (method, "/" + "/".join(segs), params, op_id, tags),
    st.sampled_from(["get", "post", "put", "patch", "delete", "head", "options", "trace"]),
    st.lists(_segment, max_size=6),
    st.lists(_params, max_size=8),
    st.one_of(st.none(), _names),
    st.lists(st.text(max_size=20), max_size=2),
)
_function_ops = st.builds(
    lambda name, props, req: (name, props, req),
    st.one_of(st.none(), _names),
    st.dictionaries(_names, st.sampled_from([{"type": "dict"}, {"type": "string"}, {}, "junk"]), max_size=6),
    st.lists(_names, max_size=3),
)


def _raw_from(spec: tuple[list[Any], list[Any]]) -> list[RawOperation]:
    http, funcs = spec
    raws = [
        RawOperation(
            source="spec.yaml",
            pointer=f"/paths/{i}/{m}",
            format="openapi-3.0",
            api="Gen",
            method=m,
            path=path,
            operation_id=op_id,
            tags=tags,
            parameters=params,
        )
        for i, (m, path, params, op_id, tags) in enumerate(http)
    ]
    raws += [
        RawOperation(
            source="tools.json",
            pointer=f"/{i}",
            format="function-list",
            api="Gen",
            operation_id=name,
            input_schema={"type": "object", "properties": props, "required": req},
        )
        for i, (name, props, req) in enumerate(funcs)
    ]
    return raws


@given(st.tuples(st.lists(_openapi_ops, max_size=12), st.lists(_function_ops, max_size=8)))
def test_generated_specs_normalize_validly(spec: tuple[list[Any], list[Any]]) -> None:
    raws = _raw_from(spec)
    ops, skipped = normalize(raws)
    assert skipped == [] and len(ops) == len(raws)
    names = [o.name for o in ops]
    assert all(NAME.match(n) for n in names)
    assert len(set(names)) == len(names)
    assert len({o.id for o in ops}) == len(ops)
    by_pointer = {(r.source, r.pointer): r for r in raws}
    for op in ops:
        r = by_pointer[(op.source, op.pointer)]
        assert op.entity and op.kind
        props = op.input_schema["properties"]
        assert all(PROPERTY.match(k) for k in props)
        assert set(op.input_schema.get("required", [])) <= set(props)
        kept = len(props)
        declared = len(r.parameters) + len((r.input_schema or {}).get("properties", {}))
        template = len(re.findall(r"\{([^}]*)\}", r.path or ""))
        # every parameter is a property or dropped with a reason (undeclared path template
        # parameters are added; names declared twice in one place are dropped as such)
        assert declared <= kept + len(op.dropped) <= declared + template
        assert all(d["reason"] for d in op.dropped)
        for ren in op.renamed:
            assert ren["to"] in props and ren["reason"]
        for param in r.parameters:
            assert (
                param.name in props
                or any(x["from"] == param.name for x in op.renamed)
                or any(d["name"] == param.name for d in op.dropped)
            )
    assert normalize(list(reversed(raws))) == (ops, skipped)


# --- the dev corpus ---------------------------------------------------------------------------

_SAMPLE = [
    "openapi/vendor/OAI__OpenAPI-Specification/_archive_/schemas/v3.0/pass/petstore.yaml",
    "openapi/vendor/twilio__twilio-oai/spec/yaml/twilio_lookups_v2.yaml",
    "openapi/apis-guru/weatherbit.io/2.0.0/swagger.yaml",
    "openapi/vendor/paypal__paypal-rest-api-specifications/openapi/catalogs_products_v1.json",
    "function_calling/tau_bench/airline_tools.json",
    "function_calling/bfcl_multi_turn_func_doc/ticket_api.json",
]


def test_dev_corpus_sample_gets_entities_and_kinds() -> None:
    corpus = shared_file("corpus/dev")
    files: list[str | Path] = [corpus / s for s in _SAMPLE if (corpus / s).is_file()]
    assert len(files) == len(_SAMPLE), f"dev corpus sample missing under {corpus}"
    raws, failed, _stats = read_paths(files, workers=1)
    assert failed == [] and raws
    ops, skipped = normalize(raws)
    assert skipped == [] and len(ops) == len(raws)
    fallback = [o for o in ops if o.entity in ("item", "") or not o.kind]
    assert len(fallback) <= len(ops) * 0.02
    by_id = {o.id: o for o in ops}
    assert len(by_id) == len(ops)
    for op in ops:
        assert NAME.match(op.name) and op.entity == op.entity.lower()


def test_a_pattern_python_cannot_compile_is_dropped_and_the_rest_kept() -> None:
    unreadable = {"type": "string", "pattern": r"[\p{L}\p{Z}]+", "maxLength": 5}
    op = one(
        openapi(
            "get",
            "/tags",
            p("Key", "query", schema=unreadable),
            p(
                "Tags",
                "query",
                schema={"type": "array", "items": {"type": "object", "properties": {"k": unreadable}}},
            ),
            p("Code", "query", schema={"type": "string", "pattern": "^[A-Z]{3}$"}),
            p("Rule", "query", schema={"type": "object", "properties": {"pattern": {"type": "string"}}}),
        )
    )
    props = op.input_schema["properties"]
    assert props["Key"] == {"type": "string", "maxLength": 5}
    assert "pattern" not in json.dumps(props["Tags"])
    assert props["Code"]["pattern"] == "^[A-Z]{3}$"
    assert props["Rule"]["properties"] == {"pattern": {"type": "string"}}  # a property named pattern


def test_a_verb_alone_acts_on_the_records_its_answer_lists() -> None:
    """DynamoDB's `Query` names no noun, and its dated service (`DynamoDB_20120810`) names no
    record: the entity is what its answer lists (`Items`), not the api's name."""
    listed = {
        "type": "object",
        "properties": {
            "Items": {
                "allOf": [{"type": "array", "items": {"description": "an item"}}, {"description": "x"}]
            },
            "Count": {"type": "integer"},
        },
    }
    path = "/#X-Amz-Target=DynamoDB_20120810.Query"
    op = one(openapi("post", path, api="Amazon DynamoDB", operation_id="Query", response_schema=listed))
    assert (op.entity, op.kind) == ("item", "read")
    plain = {"type": "object", "properties": {"Count": {"type": "integer"}}}
    op = one(openapi("post", path, api="Amazon DynamoDB", operation_id="Query", response_schema=plain))
    assert op.entity != "db"  # (the api's own noun, as before: nothing better is named)
    results = {"type": "object", "properties": {"results": {"type": "array", "items": {"type": "object"}}}}
    op = one(openapi("post", "/#X-Amz-Target=Svc_20200101.Scan", api="Widgets", response_schema=results))
    assert op.entity == "widget"  # `results` says nothing of what it lists


def test_a_noun_joined_by_a_preposition_stays_whole_when_a_schema_says_so() -> None:
    """`DescribeTimeToLive` is about a time to live (its answer holds `TimeToLiveDescription`),
    not about times; a schema named after the operation says nothing (`ExportTableToPointInTime`
    is about a table); `send_money_to_friend` is about money."""
    path = "/#X-Amz-Target=DynamoDB_20120810.DescribeTimeToLive"
    answer = {"type": "object", "properties": {"TimeToLiveDescription": {"type": "object"}}}
    op = one(
        openapi(
            "post",
            path,
            operation_id="DescribeTimeToLive",
            response_schema_name="DescribeTimeToLiveOutput",
            response_schema=answer,
        )
    )
    assert op.entity == "time_to_live"
    op = one(
        openapi(
            "post",
            "/#X-Amz-Target=DynamoDB_20120810.ExportTableToPointInTime",
            operation_id="ExportTableToPointInTime",
            response_schema_name="ExportTableToPointInTimeOutput",
        )
    )
    assert op.entity == "table"
    op = one(function("send_money_to_friend", 0))
    assert op.entity == "money"
    op = one(openapi("post", "/money", operation_id="sendMoneyToFriend", response_schema_name="Transfer"))
    assert op.entity == "money"


def test_plurals_of_words_that_have_none_and_of_names() -> None:
    from toolgen.naming import plural, singular

    assert [plural(w) for w in ("music", "feedback", "software", "vivanews", "category")] == [
        "music",
        "feedback",
        "software",
        "vivanews",
        "categories",
    ]
    assert singular("vivanews") == "vivanews" and singular("orders") == "order"
    assert singular("saas") == "saas" and singular("whois") == "whois" and singular("paas") == "paas"
    # short plurals of abbreviations: `the dbs of the database` is `its db`; `bus` stays
    assert [singular(w) for w in ("dbs", "gpus", "bus", "gas")] == ["db", "gpu", "bus", "gas"]
    assert plural("db") == "dbs"


def test_a_root_key_or_a_counted_page_gives_its_records() -> None:
    """DigitalOcean's `{vector_db: {..}}`, `{backups: [..]}`, `{vector_dbs: [..], total}` and
    `{droplets: [..], links, meta}`; an order's `items` beside its `total` and `id` stay."""
    record = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    records = {"type": "array", "items": record}
    count = {"type": "integer"}
    links = {"type": "object", "properties": {"pages": {"type": "object"}}}
    meta = {"type": "object", "properties": {"total": count}}
    pages = [
        {"vector_db": record},
        {"backups": records},
        {"vector_dbs": records, "total": count},
        {"droplets": records, "links": links, "meta": meta},
    ]
    for props in pages:
        op = one(openapi("get", "/v2/things", response_schema={"type": "object", "properties": props}))
        assert op.record_schema == record, props
    order = {"type": "object", "properties": {"id": count, "items": records, "total": count}}
    assert one(openapi("get", "/orders/{id}", response_schema=order)).record_schema == order
    scalar = {"type": "object", "properties": {"count": count}}
    assert one(openapi("get", "/things/count", response_schema=scalar)).record_schema == scalar


def test_a_page_of_values_keeps_the_values_and_drops_its_count() -> None:
    """ClearBlade's `{Data: [...], Total}`: the values, not a `Total` column of every row."""
    page = {"type": "object", "properties": {"Data": {"type": "array"}, "Total": {"type": "integer"}}}
    record = one(openapi("get", "/v2/things", response_schema=page)).record_schema
    assert set(record["properties"]) == {"Data"}


def test_an_answer_holding_another_record_the_path_names_is_not_the_entitys() -> None:
    """DigitalOcean attaches a knowledge base to an agent and answers `{agent: {...}}`: the
    agent's fields (`temperature`) are no knowledge base's."""
    agent = {
        "type": "object",
        "properties": {"agent": {"type": "object", "properties": {"temperature": {"type": "number"}}}},
    }
    path = "/v2/agents/{agent_uuid}/knowledge_bases/{knowledge_base_uuid}"
    op = one(openapi("post", path, response_schema=agent))
    assert op.entity == "knowledge_base" and op.record_schema is None
    info = {"type": "object", "properties": {"indexing_info": agent["properties"]["agent"]}}
    read = one(
        openapi("get", "/v2/scheduled-indexing/knowledge-base/{knowledge_base_uuid}", response_schema=info)
    )
    assert read.entity == "knowledge_base" and read.record_schema is None  # (the schedule's, not the base's)
    own = {"type": "object", "properties": {"knowledge_base": agent["properties"]["agent"]}}
    assert (
        one(openapi("post", path, response_schema=own)).record_schema == own["properties"]["knowledge_base"]
    )


def test_a_write_answering_a_record_named_as_another_thing_gives_no_record() -> None:
    """Discord's `POST /webhooks/{webhook_id}/{webhook_token}` answers `MessageResponse`: the
    message it sent (`content`, `embeds`) is no webhook's; `InvoiceItem` is an invoiceitem's."""
    message = {"type": "object", "properties": {"content": {"type": "string"}, "tts": {"type": "boolean"}}}
    sent = one(
        openapi(
            "post",
            "/webhooks/{webhook_id}/{webhook_token}",
            response_schema=message,
            response_schema_name="MessageResponse",
        )
    )
    assert sent.entity == "webhook" and sent.record_schema is None
    read = one(
        openapi(
            "get", "/webhooks/{webhook_id}", response_schema=message, response_schema_name="MessageResponse"
        )
    )
    assert read.record_schema == message  # (a read answers what it reads)
    item = one(
        openapi("post", "/v1/invoiceitems", response_schema=message, response_schema_name="InvoiceItem")
    )
    assert item.record_schema == message


def test_an_answer_holding_the_entity_by_name_gives_that_field_as_its_record() -> None:
    """Trash Nothing's `PUT /users/me/location` answers the current user, whose `location` field
    is the location: the location's record is that field, not the user (`username` of a place)."""
    location = {"type": "object", "properties": {"latitude": {"type": "number"}, "name": {"type": "string"}}}
    user = {"type": "object", "properties": {"username": {"type": "string"}, "location": location}}
    op = one(openapi("put", "/users/me/location", response_schema=user))
    assert op.entity == "location" and op.record_schema == location
    plain = {"type": "object", "properties": {"username": {"type": "string"}, "location": {"type": "string"}}}
    assert one(openapi("put", "/users/me/location", response_schema=plain)).record_schema == plain


def test_an_extension_header_s_vendor_is_no_part_of_the_entity_it_keys():
    """Apideck's `x-apideck-consumer-id` keys a consumer (`the consumer AC-1`, not `the apideck
    consumer AC-1`); a plain `order_id` or Xero's `xero-tenant-id` keep their words."""
    from toolgen.entities import id_entity

    assert id_entity("x-apideck-consumer-id") == "consumer"
    assert id_entity("xero-tenant-id") == "xero_tenant" and id_entity("order_id") == "order"


def test_a_history_s_rows_are_what_it_lists() -> None:
    """Slack's `conversations.history` answers `messages`: its rows are messages, not `the
    conversation histories whose name is ...`; an audit log's `entries` say no more than the log."""

    def answer(key: str) -> dict[str, Any]:
        item = {"type": "object", "properties": {"text": {"type": "string"}}}
        return {
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, key: {"type": "array", "items": item}},
        }

    op = one(openapi("get", "/conversations.history", api="Slack", response_schema=answer("messages")))
    assert op.entity == "message"
    op = one(openapi("get", "/audit_log", api="Audits", response_schema=answer("entries")))
    assert op.entity == "audit_log"
    op = one(openapi("get", "/log", api="Slicebox"))  # (a log named by no list: its entries)
    assert op.entity == "log_entry"


def test_a_page_of_several_kinds_of_record_gives_the_records() -> None:
    """OpenAI's `{object, data: [message | function call], first_id, last_id, has_more}`: the
    records are the kinds of item, not a row holding the page's `first_id`."""
    message = {"type": "object", "properties": {"id": {"type": "string"}, "role": {"type": "string"}}}
    call = {"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}}
    page = {
        "type": "object",
        "properties": {
            "object": {"type": "string"},
            "data": {"type": "array", "items": {"anyOf": [message, call]}},
            "first_id": {"type": "string"},
            "last_id": {"type": "string"},
            "has_more": {"type": "boolean"},
        },
    }
    op = one(openapi("get", "/conversations/{conversation_id}/items", response_schema=page))
    assert op.record_schema == {"anyOf": [message, call]}
