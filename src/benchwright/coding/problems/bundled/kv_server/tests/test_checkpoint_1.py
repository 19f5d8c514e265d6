"""benchwright example problem kv_server, checkpoint 1: an in-memory JSON key-value server."""

from __future__ import annotations

import pytest

# --- Core -----------------------------------------------------------------


def test_health(api):
    resp = api.get("/health")
    assert resp.status == 200
    assert resp.json["status"] == "ok"


def test_put_creates_and_get_reads(api, new_key):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": {"theme": "dark", "size": 3}})
    assert resp.status == 201
    assert resp.json["key"] == key
    assert resp.json["value"] == {"theme": "dark", "size": 3}
    resp = api.get(f"/kv/{key}")
    assert resp.status == 200
    assert (resp.json["key"], resp.json["value"]) == (key, {"theme": "dark", "size": 3})


def test_put_replaces(api, new_key):
    key = new_key()
    assert api.put(f"/kv/{key}", {"value": 1}).status == 201
    resp = api.put(f"/kv/{key}", {"value": "two"})
    assert resp.status == 200
    assert resp.json["value"] == "two"
    assert api.get(f"/kv/{key}").json["value"] == "two"


def test_delete(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": True})
    resp = api.delete(f"/kv/{key}")
    assert resp.status == 204
    assert resp.text == ""
    resp = api.get(f"/kv/{key}")
    assert resp.status == 404
    assert resp.json["error"] == "key_not_found"


# --- Functionality --------------------------------------------------------


@pytest.mark.functionality
@pytest.mark.parametrize(
    "value",
    ["text", "", 0, -12.5, True, None, [1, "a", None], {"nested": {"list": [{"x": 1}]}}],
    ids=["str", "empty-str", "zero", "float", "bool", "null", "list", "object"],
)
def test_any_json_value_round_trips(api, new_key, value):
    key = new_key()
    assert api.put(f"/kv/{key}", {"value": value}).json["value"] == value
    resp = api.get(f"/kv/{key}")
    assert resp.status == 200
    assert resp.json["value"] == value


@pytest.mark.functionality
def test_json_content_type(api, new_key):
    key = new_key()
    for resp in (api.get("/health"), api.put(f"/kv/{key}", {"value": 1}),
                 api.get(f"/kv/{key}"), api.get("/kv/missing-key-xyz")):
        assert resp.headers.get("Content-Type", "").split(";")[0].strip() == "application/json"


@pytest.mark.functionality
def test_key_characters_and_case(api, new_key):
    base = new_key("Ab.c_d-e:")
    api.put(f"/kv/{base}", {"value": "upper"})
    api.put(f"/kv/{base.lower()}", {"value": "lower"})
    assert api.get(f"/kv/{base}").json["value"] == "upper"
    assert api.get(f"/kv/{base.lower()}").json["value"] == "lower"
    longest = "x" * 64
    assert api.put(f"/kv/{longest}", {"value": 64}).status in (200, 201)
    assert api.get(f"/kv/{longest}").json["value"] == 64


@pytest.mark.functionality
def test_extra_body_fields_and_query_string_are_ignored(api, new_key):
    key = new_key()
    assert api.put(f"/kv/{key}?mode=fast", {"value": [1, 2], "note": "ignored"}).status == 201
    resp = api.get(f"/kv/{key}?x=1")
    assert resp.status == 200
    assert resp.json["value"] == [1, 2]
    assert api.get("/health?verbose=1").status == 200


@pytest.mark.functionality
def test_recreate_after_delete(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": 1})
    api.delete(f"/kv/{key}")
    resp = api.put(f"/kv/{key}", {"value": 2})
    assert resp.status == 201
    assert api.get(f"/kv/{key}").json["value"] == 2


# --- Error ----------------------------------------------------------------


@pytest.mark.error
def test_missing_key(api):
    for resp in (api.get("/kv/never-stored"), api.delete("/kv/never-stored")):
        assert resp.status == 404
        assert resp.json == {"error": "key_not_found"}


@pytest.mark.error
@pytest.mark.parametrize("path", ["/kv/", "/kv/a/b", "/kv/a%20b", "/kv/" + "y" * 65, "/kv/a+b"])
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_invalid_key(api, method, path):
    kwargs = {"body": {"value": 1}} if method == "PUT" else {}
    resp = api.request(method, path, **kwargs)
    assert resp.status == 400
    assert resp.json == {"error": "invalid_key"}


@pytest.mark.error
@pytest.mark.parametrize(
    "raw",
    [b"", b"not json", b"[1, 2]", b'"value"', b'{"val": 1}', b'{"value": 1'],
    ids=["empty", "garbage", "array", "string", "no-value", "truncated"],
)
def test_invalid_body(api, new_key, raw):
    key = new_key()
    resp = api.put(f"/kv/{key}", raw=raw)
    assert resp.status == 400
    assert resp.json == {"error": "invalid_body"}
    assert api.get(f"/kv/{key}").status == 404


@pytest.mark.error
def test_unknown_path(api):
    for path in ("/", "/nope", "/kvx/a", "/health/extra"):
        resp = api.get(path)
        assert resp.status == 404, path
        assert resp.json == {"error": "not_found"}


@pytest.mark.error
@pytest.mark.parametrize(("method", "path"), [("POST", "/kv/a"), ("DELETE", "/health"), ("PUT", "/health")])
def test_method_not_allowed(api, method, path):
    resp = api.request(method, path, raw=b"{}")
    assert resp.status == 405
    assert resp.json == {"error": "method_not_allowed"}
