"""Roots: directories as file:// URIs, declared per era, answered in both."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from solution.lifecycle.capabilities import client_capabilities
from solution.lifecycle.roots import Roots, file_uri, root_problem
from solution.lifecycle.server_requests import answer_server_request


def test_a_uri_is_absolute_and_percent_encoded_from_the_paths_utf8(tmp_path: Path) -> None:
    odd = tmp_path / "mes notes #1 100% ü?"
    odd.mkdir()
    uri = file_uri(odd)
    assert uri.startswith("file:///") and " " not in uri and "ü" not in uri
    assert "%20" in uri and "%23" in uri and "%25" in uri and "%C3%BC" in uri and "%3F" in uri
    assert unquote(urlsplit(uri).path) == str(odd)  # the server reads back exactly this directory


def test_a_relative_directory_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert file_uri(".") == tmp_path.as_uri()


@pytest.mark.skipif(os.name != "posix", reason="raw bytes in a file name")
def test_a_name_that_is_not_utf8_keeps_its_bytes(tmp_path: Path) -> None:
    raw = os.fsdecode(os.fsencode(str(tmp_path)) + b"/\xff")
    assert file_uri(raw).endswith("/%FF")


def test_roots_are_listed_once_each_in_order_and_a_change_is_reported(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    roots = Roots([a, b, a])
    assert roots.result() == {"roots": [{"uri": a.as_uri(), "name": "a"}, {"uri": b.as_uri(), "name": "b"}]}
    assert roots.set([b, a]) is True and roots.uris == [b.as_uri(), a.as_uri()]
    assert roots.set([b, a]) is False


def test_a_root_that_is_not_a_directory_is_one_line(tmp_path: Path) -> None:
    assert root_problem(str(tmp_path)) is None
    assert root_problem(str(tmp_path / "nope")) == f"--root {tmp_path / 'nope'}: not a directory"


def test_the_capability_says_list_changed_only_where_the_notification_exists() -> None:
    assert client_capabilities("legacy", roots=True) == {"roots": {"listChanged": True}}
    assert client_capabilities("current", roots=True)["roots"] == {}
    assert "roots" not in client_capabilities("current") and "roots" not in client_capabilities("legacy")


@pytest.mark.anyio
async def test_a_handshake_era_roots_request_is_answered_with_them_even_between_calls(tmp_path: Path) -> None:
    ask = {"jsonrpc": "2.0", "id": 4, "method": "roots/list"}
    reply = await answer_server_request("s", None, ask, busy=False, roots=Roots([tmp_path]))
    assert reply == {"jsonrpc": "2.0", "id": 4, "result": {"roots": [{"uri": tmp_path.as_uri(),
                                                                      "name": tmp_path.name}]}}
    refused = await answer_server_request("s", None, ask, busy=True)
    assert refused["error"]["code"] == -32601  # no roots given: none declared, none answered
