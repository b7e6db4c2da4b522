"""Pages and cursors for every list (paging.py)."""

from __future__ import annotations

import pytest

from servers.paging import Cursors
from servers.rpc import RpcError


def test_a_cursor_names_its_list_so_another_lists_cursor_is_refused() -> None:
    cursors = Cursors("notes")
    tools, resources = cursors.make(2), cursors.make(2, kind=b"r")
    assert tools != resources
    assert cursors.read(tools, 3) == 2 and cursors.read(resources, 3, kind=b"r") == 2
    for cursor, kind in ((tools, b"r"), (resources, b"")):
        with pytest.raises(RpcError) as caught:
            cursors.read(cursor, 3, kind=kind)
        assert caught.value.code == -32602


def test_a_tools_cursor_is_what_it_always_was() -> None:
    # The lab's journals from before the resources have these: four bytes of check, two of page.
    assert len(bytes.fromhex(Cursors("notes").make(1))) == 6
    assert Cursors("notes").make(1, paging="empty-cursor") == ""


def test_a_cursor_past_the_end_or_from_another_server_is_refused() -> None:
    with pytest.raises(RpcError):
        Cursors("notes").read(Cursors("notes").make(3, kind=b"r"), 3, kind=b"r")
    with pytest.raises(RpcError):
        Cursors("notes").read(Cursors("tickets").make(1, kind=b"r"), 3, kind=b"r")
