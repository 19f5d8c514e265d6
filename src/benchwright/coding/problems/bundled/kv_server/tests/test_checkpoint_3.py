"""benchwright example problem kv_server, checkpoint 3: a data file, atomic batches, JSON DELETE answers.

This checkpoint sets include_prior_tests: false, because DELETE now answers 200 with a
JSON body instead of 204. The earlier tests that still hold are ported at the end of
this file and marked `regression`.
"""

from __future__ import annotations

import os
import signal
import time

import pytest

SHORT_TTL = 0.2
AFTER_SHORT_TTL = 0.5  # seconds to sleep so that a SHORT_TTL key has surely expired
# `now + ttl - now` may exceed `ttl` by a rounding step (when `now + ttl` crosses a power of
# two): a remaining time is compared with its TTL with this much slack.
ROUNDING = 1e-6
EXIT_TIMEOUT = 8.0


@pytest.fixture(scope="module")
def server_args(tmp_path_factory) -> list[str]:
    """The shared server of this module keeps its data in a temporary folder, not in the workspace."""
    return ["--data-file", str(tmp_path_factory.mktemp("shared_data") / "kv_data.json")]


@pytest.fixture
def data_file(tmp_path):
    return str(tmp_path / "store.json")


def put(api, key, value, **options):
    return api.put(f"/kv/{key}", {"value": value, **options})


# --- Core -----------------------------------------------------------------


def test_delete_answers_json(api, new_key):
    key = new_key()
    put(api, key, 1)
    put(api, key, 2)
    resp = api.delete(f"/kv/{key}")
    assert resp.status == 200
    assert resp.headers.get("Content-Type", "").split(";")[0].strip() == "application/json"
    assert resp.json == {"key": key, "deleted": True, "version": 2}
    assert api.get(f"/kv/{key}").status == 404


def test_data_survives_restart(server_launcher, data_file):
    first = server_launcher("--data-file", data_file)
    put(first.client, "kept", {"n": 1})
    put(first.client, "kept", {"n": 2})
    put(first.client, "dropped", "x")
    assert first.client.delete("/kv/dropped").status == 200
    first.stop()

    second = server_launcher("--data-file", data_file)
    resp = second.client.get("/kv/kept")
    assert (resp.status, resp.json["value"], resp.json["version"]) == (200, {"n": 2}, 2)
    assert second.client.get("/kv/dropped").status == 404
    assert second.client.get("/kv").json["keys"] == ["kept"]
    assert put(second.client, "kept", {"n": 3}).json["version"] == 3


def test_batch_applies_all(api, new_key):
    a, b, c = new_key(), new_key(), new_key()
    put(api, b, "old")
    put(api, c, "old")
    put(api, c, "older")
    resp = api.post("/batch", {"ops": [
        {"op": "put", "key": a, "value": "A"},
        {"op": "put", "key": b, "value": "B", "if_version": 1},
        {"op": "delete", "key": c},
    ]})
    assert resp.status == 200
    assert resp.json["results"] == [
        {"op": "put", "key": a, "version": 1, "created": True},
        {"op": "put", "key": b, "version": 2, "created": False},
        {"op": "delete", "key": c, "version": 2},
    ]
    assert api.get(f"/kv/{a}").json["value"] == "A"
    assert api.get(f"/kv/{b}").json["value"] == "B"
    assert api.get(f"/kv/{c}").status == 404


# --- Functionality --------------------------------------------------------


@pytest.mark.functionality
def test_answered_changes_survive_sigkill(server_launcher, data_file):
    first = server_launcher("--data-file", data_file)
    put(first.client, "a", [1, 2, 3])
    first.client.post("/batch", {"ops": [{"op": "put", "key": "b", "value": True},
                                          {"op": "put", "key": "b", "value": False}]})
    os.killpg(first.proc.pid, signal.SIGKILL)
    first.proc.wait(timeout=EXIT_TIMEOUT)

    second = server_launcher("--data-file", data_file)
    assert second.client.get("/kv/a").json["value"] == [1, 2, 3]
    resp = second.client.get("/kv/b")
    assert (resp.json["value"], resp.json["version"]) == (False, 2)


@pytest.mark.functionality
def test_missing_data_file_starts_empty_and_is_written(server_launcher, tmp_path):
    path = tmp_path / "new_folder_file.json"
    srv = server_launcher("--data-file", str(path))
    assert srv.client.get("/kv").json == {"keys": [], "truncated": False}
    assert put(srv.client, "first", 1).status == 201
    assert path.is_file()


@pytest.mark.functionality
def test_expiry_is_wall_clock_across_restart(server_launcher, data_file):
    first = server_launcher("--data-file", data_file)
    put(first.client, "long", "stays", ttl=60)
    put(first.client, "short", "goes", ttl=SHORT_TTL)
    first.stop()
    time.sleep(AFTER_SHORT_TTL)

    second = server_launcher("--data-file", data_file)
    assert second.client.get("/kv/short").status == 404
    resp = second.client.get("/kv/long")
    assert resp.json["value"] == "stays"
    assert 50 < resp.json["expires_in"] <= 60 + ROUNDING
    assert second.client.get("/kv").json["keys"] == ["long"]


@pytest.mark.functionality
def test_batch_operations_see_earlier_ones(api, new_key):
    key = new_key()
    resp = api.post("/batch", {"ops": [
        {"op": "put", "key": key, "value": 1},
        {"op": "put", "key": key, "value": 2, "if_version": 1, "ttl": 60},
        {"op": "delete", "key": key},
        {"op": "put", "key": key, "value": 3, "if_version": 0},
    ]})
    assert resp.status == 200
    assert [(r["op"], r["version"], r.get("created")) for r in resp.json["results"]] == [
        ("put", 1, True), ("put", 2, False), ("delete", 2, None), ("put", 1, True),
    ]
    got = api.get(f"/kv/{key}").json
    assert (got["value"], got["version"], got["expires_in"]) == (3, 1, None)


# --- Error ----------------------------------------------------------------


@pytest.mark.error
def test_unreadable_data_file_stops_the_server(server_launcher, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text("this is not a data file {", encoding="utf-8")
    srv = server_launcher("--data-file", str(path), wait=False)
    code = srv.proc.wait(timeout=EXIT_TIMEOUT)
    assert code != 0
    assert "error" in srv.log().lower()


BATCH_CHECK_CASES = {
    "not-json": (b"{ops: []}", {"error": "invalid_body"}),
    "no-ops": (b'{"operations": []}', {"error": "invalid_body"}),
    "ops-not-list": (b'{"ops": {"op": "put"}}', {"error": "invalid_body"}),
    "empty": (b'{"ops": []}', {"error": "invalid_body"}),
    "too-many": (
        ('{"ops": [' + ",".join(['{"op": "put", "key": "bk0", "value": 1}'] * 101) + "]}").encode(),
        {"error": "invalid_body"},
    ),
    "unknown-op": (
        b'{"ops": [{"op": "put", "key": "bk0", "value": 1}, {"op": "merge", "key": "bk1"}]}',
        {"error": "invalid_body", "index": 1},
    ),
    "bad-key": (
        b'{"ops": [{"op": "put", "key": "bk0", "value": 1}, {"op": "delete", "key": "a/b"}]}',
        {"error": "invalid_key", "index": 1},
    ),
    "key-not-string": (b'{"ops": [{"op": "delete", "key": 7}]}', {"error": "invalid_key", "index": 0}),
    "no-value": (b'{"ops": [{"op": "put", "key": "bk0"}]}', {"error": "invalid_body", "index": 0}),
    "bad-ttl": (
        b'{"ops": [{"op": "delete", "key": "bk9"}, {"op": "put", "key": "bk0", "value": 1, "ttl": -1}]}',
        {"error": "invalid_body", "index": 1},
    ),
}


@pytest.mark.error
@pytest.mark.parametrize("case", list(BATCH_CHECK_CASES))
def test_batch_check_errors(api, case):
    raw, expected = BATCH_CHECK_CASES[case]
    resp = api.post("/batch", raw=raw)
    assert resp.status == 400
    assert resp.json == expected
    assert api.get("/kv/bk0").status == 404


@pytest.mark.error
@pytest.mark.parametrize(
    ("failing_op", "status", "expected"),
    [
        ({"op": "delete", "key": "{missing}"}, 404, {"error": "key_not_found", "index": 2}),
        ({"op": "put", "key": "{existing}", "value": 9, "if_version": 1}, 409,
         {"error": "version_conflict", "current_version": 2, "index": 2}),
    ],
    ids=["delete-missing", "conflict"],
)
def test_failed_batch_changes_nothing(api, new_key, failing_op, status, expected):
    existing, fresh, missing = new_key(), new_key(), new_key()
    put(api, existing, "before")
    failing = {k: (v.format(missing=missing, existing=existing) if k == "key" else v)
               for k, v in failing_op.items()}
    resp = api.post("/batch", {"ops": [
        {"op": "put", "key": existing, "value": "during"},
        {"op": "put", "key": fresh, "value": "new"},
        failing,
    ]})
    assert resp.status == status
    assert resp.json == expected
    got = api.get(f"/kv/{existing}").json
    assert (got["value"], got["version"]) == ("before", 1)
    assert api.get(f"/kv/{fresh}").status == 404


@pytest.mark.error
def test_batch_route_methods(api):
    for method in ("GET", "PUT", "DELETE"):
        resp = api.request(method, "/batch")
        assert resp.status == 405, method
        assert resp.json == {"error": "method_not_allowed"}


# --- Regression: ported from checkpoint 1 --------------------------------------


@pytest.mark.regression
def test_health(api):
    resp = api.get("/health")
    assert resp.status == 200
    assert resp.json["status"] == "ok"


@pytest.mark.regression
def test_put_creates_and_get_reads(api, new_key):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": {"theme": "dark", "size": 3}})
    assert resp.status == 201
    assert resp.json["key"] == key
    assert resp.json["value"] == {"theme": "dark", "size": 3}
    resp = api.get(f"/kv/{key}")
    assert resp.status == 200
    assert (resp.json["key"], resp.json["value"]) == (key, {"theme": "dark", "size": 3})


@pytest.mark.regression
def test_put_replaces(api, new_key):
    key = new_key()
    assert api.put(f"/kv/{key}", {"value": 1}).status == 201
    resp = api.put(f"/kv/{key}", {"value": "two"})
    assert resp.status == 200
    assert resp.json["value"] == "two"
    assert api.get(f"/kv/{key}").json["value"] == "two"


@pytest.mark.regression
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


@pytest.mark.regression
def test_json_content_type(api, new_key):
    key = new_key()
    for resp in (api.get("/health"), api.put(f"/kv/{key}", {"value": 1}),
                 api.get(f"/kv/{key}"), api.get("/kv/missing-key-xyz")):
        assert resp.headers.get("Content-Type", "").split(";")[0].strip() == "application/json"


@pytest.mark.regression
def test_key_characters_and_case(api, new_key):
    base = new_key("Ab.c_d-e:")
    api.put(f"/kv/{base}", {"value": "upper"})
    api.put(f"/kv/{base.lower()}", {"value": "lower"})
    assert api.get(f"/kv/{base}").json["value"] == "upper"
    assert api.get(f"/kv/{base.lower()}").json["value"] == "lower"
    longest = "x" * 64
    assert api.put(f"/kv/{longest}", {"value": 64}).status in (200, 201)
    assert api.get(f"/kv/{longest}").json["value"] == 64


@pytest.mark.regression
def test_extra_body_fields_and_query_string_are_ignored(api, new_key):
    key = new_key()
    assert api.put(f"/kv/{key}?mode=fast", {"value": [1, 2], "note": "ignored"}).status == 201
    resp = api.get(f"/kv/{key}?x=1")
    assert resp.status == 200
    assert resp.json["value"] == [1, 2]
    assert api.get("/health?verbose=1").status == 200


@pytest.mark.regression
def test_recreate_after_delete(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": 1})
    api.delete(f"/kv/{key}")
    resp = api.put(f"/kv/{key}", {"value": 2})
    assert resp.status == 201
    assert api.get(f"/kv/{key}").json["value"] == 2


@pytest.mark.regression
def test_missing_key(api):
    for resp in (api.get("/kv/never-stored"), api.delete("/kv/never-stored")):
        assert resp.status == 404
        assert resp.json == {"error": "key_not_found"}


@pytest.mark.regression
@pytest.mark.parametrize("path", ["/kv/", "/kv/a/b", "/kv/a%20b", "/kv/" + "y" * 65, "/kv/a+b"])
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_invalid_key(api, method, path):
    kwargs = {"body": {"value": 1}} if method == "PUT" else {}
    resp = api.request(method, path, **kwargs)
    assert resp.status == 400
    assert resp.json == {"error": "invalid_key"}


@pytest.mark.regression
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


@pytest.mark.regression
def test_unknown_path(api):
    for path in ("/", "/nope", "/kvx/a", "/health/extra"):
        resp = api.get(path)
        assert resp.status == 404, path
        assert resp.json == {"error": "not_found"}


@pytest.mark.regression
@pytest.mark.parametrize(("method", "path"), [("POST", "/kv/a"), ("DELETE", "/health"), ("PUT", "/health")])
def test_method_not_allowed(api, method, path):
    resp = api.request(method, path, raw=b"{}")
    assert resp.status == 405
    assert resp.json == {"error": "method_not_allowed"}


# --- Regression: ported from checkpoint 2 --------------------------------------


@pytest.mark.regression
def test_versions_count_writes(api, new_key):
    key = new_key()
    assert [api.put(f"/kv/{key}", {"value": n}).json["version"] for n in range(3)] == [1, 2, 3]
    resp = api.get(f"/kv/{key}")
    assert (resp.json["value"], resp.json["version"], resp.json["expires_in"]) == (2, 3, None)


@pytest.mark.regression
def test_list_with_prefix(api, new_key):
    prefix = new_key("list") + "-"
    for suffix in ("b", "a", "a.b", "B", "ab"):
        api.put(f"/kv/{prefix}{suffix}", {"value": suffix})
    api.put(f"/kv/{prefix[:-1]}", {"value": "not under the prefix"})
    resp = api.get(f"/kv?prefix={prefix}")
    assert resp.status == 200
    assert resp.json["keys"] == [prefix + s for s in ("B", "a", "a.b", "ab", "b")]
    assert resp.json["truncated"] is False


@pytest.mark.regression
def test_key_expires(api, new_key):
    key = new_key()
    assert api.put(f"/kv/{key}", {"value": "soon gone", "ttl": SHORT_TTL}).status == 201
    time.sleep(AFTER_SHORT_TTL)
    assert api.get(f"/kv/{key}").status == 404
    resp = api.delete(f"/kv/{key}")
    assert resp.status == 404
    assert resp.json == {"error": "key_not_found"}


@pytest.mark.regression
def test_version_restarts_after_delete(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": 1})
    api.put(f"/kv/{key}", {"value": 2})
    api.delete(f"/kv/{key}")
    resp = api.put(f"/kv/{key}", {"value": 3})
    assert (resp.status, resp.json["version"]) == (201, 1)


@pytest.mark.regression
def test_conditional_writes_that_hold(api, new_key):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": "first", "if_version": 0})
    assert (resp.status, resp.json["version"]) == (201, 1)
    resp = api.put(f"/kv/{key}", {"value": "second", "if_version": 1})
    assert (resp.status, resp.json["version"], resp.json["value"]) == (200, 2, "second")
    resp = api.put(f"/kv/{key}", {"value": "third", "if_version": None})
    assert resp.json["version"] == 3


@pytest.mark.regression
def test_expires_in(api, new_key):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": 1, "ttl": 60})
    assert 0 < resp.json["expires_in"] <= 60 + ROUNDING
    remaining = api.get(f"/kv/{key}").json["expires_in"]
    assert 50 < remaining <= 60 + ROUNDING
    resp = api.put(f"/kv/{key}", {"value": 2, "ttl": 120.5})
    assert 110 < resp.json["expires_in"] <= 120.5 + ROUNDING
    assert resp.json["version"] == 2


@pytest.mark.regression
def test_put_without_ttl_makes_key_permanent(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": 1, "ttl": SHORT_TTL})
    assert api.put(f"/kv/{key}", {"value": 2}).json["expires_in"] is None
    time.sleep(AFTER_SHORT_TTL)
    resp = api.get(f"/kv/{key}")
    assert (resp.status, resp.json["value"], resp.json["version"]) == (200, 2, 2)


@pytest.mark.regression
def test_expired_key_is_gone_everywhere(api, new_key):
    prefix = new_key("exp") + "-"
    api.put(f"/kv/{prefix}stay", {"value": 1})
    api.put(f"/kv/{prefix}go", {"value": 1, "ttl": SHORT_TTL})
    api.put(f"/kv/{prefix}go", {"value": 2, "ttl": SHORT_TTL})
    time.sleep(AFTER_SHORT_TTL)
    assert api.get(f"/kv?prefix={prefix}").json["keys"] == [prefix + "stay"]
    resp = api.put(f"/kv/{prefix}go", {"value": 3, "if_version": 0})
    assert (resp.status, resp.json["version"]) == (201, 1)


@pytest.mark.regression
def test_list_limit_and_empty_result(api, new_key):
    prefix = new_key("lim") + "-"
    for n in range(5):
        api.put(f"/kv/{prefix}{n}", {"value": n})
    resp = api.get(f"/kv?limit=3&prefix={prefix}&other=1")
    assert resp.json == {"keys": [f"{prefix}0", f"{prefix}1", f"{prefix}2"], "truncated": True}
    assert api.get(f"/kv?prefix={prefix}&limit=5").json["truncated"] is False
    assert api.get("/kv?prefix=zz-no-such-prefix").json == {"keys": [], "truncated": False}


@pytest.mark.regression
def test_list_without_prefix_lists_everything(api, new_key):
    mine = [new_key("all"), new_key("all")]
    for key in mine:
        api.put(f"/kv/{key}", {"value": None})
    keys = api.get("/kv").json["keys"]
    assert set(mine) <= set(keys)
    assert keys == sorted(keys)


@pytest.mark.regression
@pytest.mark.parametrize(("existing_writes", "if_version", "current"), [(1, 0, 1), (2, 1, 2), (0, 1, 0), (1, 3, 1)])
def test_version_conflict(api, new_key, existing_writes, if_version, current):
    key = new_key()
    for n in range(existing_writes):
        api.put(f"/kv/{key}", {"value": f"old{n}"})
    resp = api.put(f"/kv/{key}", {"value": "new", "if_version": if_version})
    assert resp.status == 409
    assert resp.json == {"error": "version_conflict", "current_version": current}
    after = api.get(f"/kv/{key}")
    if existing_writes:
        assert (after.json["value"], after.json["version"]) == (f"old{existing_writes - 1}", current)
    else:
        assert after.status == 404


@pytest.mark.regression
@pytest.mark.parametrize(
    "extra",
    [{"ttl": 0}, {"ttl": -5}, {"ttl": "10"}, {"ttl": True}, {"if_version": -1}, {"if_version": 1.5},
     {"if_version": "1"}, {"if_version": False}],
    ids=["ttl-zero", "ttl-negative", "ttl-string", "ttl-bool", "ifv-negative", "ifv-float",
         "ifv-string", "ifv-bool"],
)
def test_invalid_put_options(api, new_key, extra):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": 1, **extra})
    assert resp.status == 400
    assert resp.json == {"error": "invalid_body"}
    assert api.get(f"/kv/{key}").status == 404


@pytest.mark.regression
@pytest.mark.parametrize("limit", ["0", "1001", "-3", "ten", "2.5", ""])
def test_invalid_limit(api, limit):
    resp = api.get(f"/kv?limit={limit}")
    assert resp.status == 400
    assert resp.json == {"error": "invalid_query"}


@pytest.mark.regression
def test_list_route_methods(api):
    for method in ("PUT", "POST", "DELETE"):
        resp = api.request(method, "/kv", raw=b'{"value": 1}')
        assert resp.status == 405, method
        assert resp.json == {"error": "method_not_allowed"}


@pytest.mark.regression
def test_invalid_key_wins_over_invalid_body(api):
    resp = api.put("/kv/bad%key", raw=b"not json")
    assert (resp.status, resp.json) == (400, {"error": "invalid_key"})
