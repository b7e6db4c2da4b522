"""The tokens file: one file, readable by this user only, never through a link, and
every token in it known to redact.py the moment it is read or kept."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from solution.untrusted import HIDDEN, redacted
from solution.host.safe_files import UnsafeFile
from solution.remote.tokens import Client, Record, Tokens, TokenStore

URL = "http://127.0.0.1:8765/mcp"


def record(access: str = "access-0123456789", refresh: str = "refresh-0123456789") -> Record:
    return Record("http://127.0.0.1:8765", URL, "http://127.0.0.1:8765/token", None,
                  Client("client-1", "secret-0123456789", "client_secret_basic"), Tokens(access, refresh, 1e10, "read"))


def test_a_record_is_kept_in_a_file_only_this_user_can_read(tmp_path: Path) -> None:
    path = tmp_path / "config" / "tokens.json"
    TokenStore(path).put(URL, record())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0
    again = TokenStore(path).get(URL)
    assert again == record() and json.loads(path.read_text())["version"] == 1


def test_two_servers_share_the_file_and_forgetting_one_keeps_the_other(tmp_path: Path) -> None:
    store = TokenStore(tmp_path / "tokens.json")
    store.put(URL, record())
    store.put("https://other.example/mcp", record("access-other-0123"))
    assert store.forget(URL).tokens == record().tokens
    assert store.get(URL) == Record() and store.get("https://other.example/mcp").tokens is not None


def test_tokens_read_from_the_file_are_hidden_from_then_on(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(json.dumps({"version": 1, "servers": {URL: {
        "client": {"client_id": "c", "client_secret": "from-file-secret-42"},
        "tokens": {"access_token": "from-file-access-42", "refresh_token": "from-file-refresh-42"}}}}))
    TokenStore(path).get(URL)
    assert redacted("from-file-access-42 from-file-refresh-42 from-file-secret-42") == " ".join([HIDDEN] * 3)


def test_a_planted_link_is_refused_not_followed(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep me")
    os.symlink(target, tmp_path / "tokens.json")
    with pytest.raises(UnsafeFile, match="symbolic link"):
        TokenStore(tmp_path / "tokens.json").put(URL, record())
    assert target.read_text() == "keep me"


def test_a_damaged_file_or_entry_counts_as_no_sign_in(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    path.write_text("{not json")
    assert TokenStore(path).get(URL) == Record()
    path.write_text(json.dumps({"servers": {URL: {"tokens": {"refresh_token": "r"}, "client": "x"}}}))
    assert TokenStore(path).get(URL) == Record()
    assert TokenStore(None).get(URL) == Record()  # in memory: nothing until put
