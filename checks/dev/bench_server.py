"""The least an MCP server can do per call, for the benchmark's client rows.

One tool, replies pasted together from bytes made once: the per-call cost is
one `json.loads` and two writes, so the clients' own costs decide the rates.
It still answers everything the official SDK's client sends (discover, list,
call), so every client is measured against the same server. Standard library.
"""

from __future__ import annotations

import json
import sys

TOOL = {"name": "read_note", "description": "Read a note",
        "inputSchema": {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}}
STAMP = {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench", "version": "1"}}}
RESULTS = {
    "server/discover": {"supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
                        "ttlMs": 0, "cacheScope": "public", **STAMP},
    "tools/list": {"tools": [TOOL], "ttlMs": 0, "cacheScope": "public", **STAMP},
    "tools/call": {"content": [{"type": "text", "text": "Follow nextCursor until it is missing."}],
                   "isError": False, **STAMP},
}
READY = {method: json.dumps(result, separators=(",", ":")).encode() for method, result in RESULTS.items()}
UNKNOWN = b'{"code":-32601,"message":"Method not found"}'


def main() -> None:
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode()
        body = READY.get(message.get("method", ""))
        out.write(head + (b',"result":' + body if body else b',"error":' + UNKNOWN) + b"}\n")
        out.flush()


if __name__ == "__main__":
    main()
