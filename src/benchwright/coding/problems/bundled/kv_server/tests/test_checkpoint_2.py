"""benchwright example problem kv_server, checkpoint 2: versions, conditional writes, TTLs, listing."""

from __future__ import annotations

import time

import pytest

SHORT_TTL = 0.2
AFTER_SHORT_TTL = 0.5  # seconds to sleep so that a SHORT_TTL key has surely expired
# `now + ttl - now` may exceed `ttl` by a rounding step (when `now + ttl` crosses a power of
# two): a remaining time is compared with its TTL with this much slack.
ROUNDING = 1e-6


# --- Core -----------------------------------------------------------------


def test_versions_count_writes(api, new_key):
    key = new_key()
    assert [api.put(f"/kv/{key}", {"value": n}).json["version"] for n in range(3)] == [1, 2, 3]
    resp = api.get(f"/kv/{key}")
    assert (resp.json["value"], resp.json["version"], resp.json["expires_in"]) == (2, 3, None)


def test_list_with_prefix(api, new_key):
    prefix = new_key("list") + "-"
    for suffix in ("b", "a", "a.b", "B", "ab"):
        api.put(f"/kv/{prefix}{suffix}", {"value": suffix})
    api.put(f"/kv/{prefix[:-1]}", {"value": "not under the prefix"})
    resp = api.get(f"/kv?prefix={prefix}")
    assert resp.status == 200
    assert resp.json["keys"] == [prefix + s for s in ("B", "a", "a.b", "ab", "b")]
    assert resp.json["truncated"] is False


def test_key_expires(api, new_key):
    key = new_key()
    assert api.put(f"/kv/{key}", {"value": "soon gone", "ttl": SHORT_TTL}).status == 201
    time.sleep(AFTER_SHORT_TTL)
    assert api.get(f"/kv/{key}").status == 404
    resp = api.delete(f"/kv/{key}")
    assert resp.status == 404
    assert resp.json == {"error": "key_not_found"}


# --- Functionality --------------------------------------------------------


@pytest.mark.functionality
def test_version_restarts_after_delete(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": 1})
    api.put(f"/kv/{key}", {"value": 2})
    api.delete(f"/kv/{key}")
    resp = api.put(f"/kv/{key}", {"value": 3})
    assert (resp.status, resp.json["version"]) == (201, 1)


@pytest.mark.functionality
def test_conditional_writes_that_hold(api, new_key):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": "first", "if_version": 0})
    assert (resp.status, resp.json["version"]) == (201, 1)
    resp = api.put(f"/kv/{key}", {"value": "second", "if_version": 1})
    assert (resp.status, resp.json["version"], resp.json["value"]) == (200, 2, "second")
    resp = api.put(f"/kv/{key}", {"value": "third", "if_version": None})
    assert resp.json["version"] == 3


@pytest.mark.functionality
def test_expires_in(api, new_key):
    key = new_key()
    resp = api.put(f"/kv/{key}", {"value": 1, "ttl": 60})
    assert 0 < resp.json["expires_in"] <= 60 + ROUNDING
    remaining = api.get(f"/kv/{key}").json["expires_in"]
    assert 50 < remaining <= 60 + ROUNDING
    resp = api.put(f"/kv/{key}", {"value": 2, "ttl": 120.5})
    assert 110 < resp.json["expires_in"] <= 120.5 + ROUNDING
    assert resp.json["version"] == 2


@pytest.mark.functionality
def test_put_without_ttl_makes_key_permanent(api, new_key):
    key = new_key()
    api.put(f"/kv/{key}", {"value": 1, "ttl": SHORT_TTL})
    assert api.put(f"/kv/{key}", {"value": 2}).json["expires_in"] is None
    time.sleep(AFTER_SHORT_TTL)
    resp = api.get(f"/kv/{key}")
    assert (resp.status, resp.json["value"], resp.json["version"]) == (200, 2, 2)


@pytest.mark.functionality
def test_expired_key_is_gone_everywhere(api, new_key):
    prefix = new_key("exp") + "-"
    api.put(f"/kv/{prefix}stay", {"value": 1})
    api.put(f"/kv/{prefix}go", {"value": 1, "ttl": SHORT_TTL})
    api.put(f"/kv/{prefix}go", {"value": 2, "ttl": SHORT_TTL})
    time.sleep(AFTER_SHORT_TTL)
    assert api.get(f"/kv?prefix={prefix}").json["keys"] == [prefix + "stay"]
    resp = api.put(f"/kv/{prefix}go", {"value": 3, "if_version": 0})
    assert (resp.status, resp.json["version"]) == (201, 1)


@pytest.mark.functionality
def test_list_limit_and_empty_result(api, new_key):
    prefix = new_key("lim") + "-"
    for n in range(5):
        api.put(f"/kv/{prefix}{n}", {"value": n})
    resp = api.get(f"/kv?limit=3&prefix={prefix}&other=1")
    assert resp.json == {"keys": [f"{prefix}0", f"{prefix}1", f"{prefix}2"], "truncated": True}
    assert api.get(f"/kv?prefix={prefix}&limit=5").json["truncated"] is False
    assert api.get("/kv?prefix=zz-no-such-prefix").json == {"keys": [], "truncated": False}


@pytest.mark.functionality
def test_list_without_prefix_lists_everything(api, new_key):
    mine = [new_key("all"), new_key("all")]
    for key in mine:
        api.put(f"/kv/{key}", {"value": None})
    keys = api.get("/kv").json["keys"]
    assert set(mine) <= set(keys)
    assert keys == sorted(keys)


# --- Error ----------------------------------------------------------------


@pytest.mark.error
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


@pytest.mark.error
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


@pytest.mark.error
@pytest.mark.parametrize("limit", ["0", "1001", "-3", "ten", "2.5", ""])
def test_invalid_limit(api, limit):
    resp = api.get(f"/kv?limit={limit}")
    assert resp.status == 400
    assert resp.json == {"error": "invalid_query"}


@pytest.mark.error
def test_list_route_methods(api):
    for method in ("PUT", "POST", "DELETE"):
        resp = api.request(method, "/kv", raw=b'{"value": 1}')
        assert resp.status == 405, method
        assert resp.json == {"error": "method_not_allowed"}


@pytest.mark.error
def test_invalid_key_wins_over_invalid_body(api):
    resp = api.put("/kv/bad%key", raw=b"not json")
    assert (resp.status, resp.json) == (400, {"error": "invalid_key"})
