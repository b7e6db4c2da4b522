from __future__ import annotations

import pytest

from solution.errors import ProtocolViolation
from solution.discovery import complete_result, with_envelope


def test_every_request_carries_version_capabilities_and_client_info() -> None:
    meta = with_envelope({"cursor": "c", "_meta": {"progressToken": 1}})["_meta"]
    assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
    assert meta["io.modelcontextprotocol/clientCapabilities"] == {}
    assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-client-lab"
    assert meta["progressToken"] == 1


def test_a_missing_result_type_means_complete_and_an_unknown_one_is_refused() -> None:
    assert complete_result("m", {"tools": []}) == {"tools": []}
    with pytest.raises(ProtocolViolation, match="unsupported resultType 'task'"):
        complete_result("m", {"resultType": "task"})
    with pytest.raises(ProtocolViolation, match="input_required"):
        complete_result("m", {"resultType": "input_required"})
    assert complete_result("m", {"resultType": "input_required"}, ("complete", "input_required"))
    with pytest.raises(ProtocolViolation, match="not a JSON object"):
        complete_result("m", [1])
