"""A scripted server for the client's resources, prompts, logs, sampling and roots,
in either era (`--legacy`: the initialize handshake; otherwise 2026-07-28), over
stdio, standard library only. Every message it reads goes to `--journal FILE`.

Resources (two a page; "" is the second page's cursor): note://a (text with a
terminal attack), note://b (a PNG blob), note://long (250,000 characters),
one template; `change` adds note://c and announces the list change. A subscription
is answered with one update of its URI, or a burst of BURST for note://burst. Prompts:
`summarise` (topic required; completions for it), `plain`. Tools: `find`
(a resource link and an embedded resource), `noisy` (log messages at four
levels), `ask_model` (sampling), `where` (roots), `change`.
"""

from __future__ import annotations

import base64
import json
import sys
import threading
from typing import Any, Dict, List, Optional

LEGACY = "--legacy" in sys.argv
JOURNAL = sys.argv[sys.argv.index("--journal") + 1] if "--journal" in sys.argv else None
ATTACK = "\x1b[2J\x1b]0;owned\x07"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256))).decode()
RESOURCES: List[Dict[str, Any]] = [
    {"uri": "note://a", "name": "a", "mimeType": "text/plain"},
    {"uri": "note://b", "name": "b", "mimeType": "image/png"},
    {"uri": "note://long", "name": "long", "mimeType": "text/plain"}]
TEXTS = {"note://a": f"alpha note {ATTACK}end", "note://long": "x" * 250_000, "note://c": "gamma"}
PROMPTS: List[Dict[str, Any]] = [{"name": "summarise", "description": "Summarise the notes on a topic",
            "arguments": [{"name": "topic", "required": True}, {"name": "style"}]},
           {"name": "plain"}]
TOPICS = ["paging", "pagination", "parsing", "timeouts"]
LEVELS = ("debug", "info", "warning", "error")
TOOL_NAMES = ("find", "noisy", "ask_model", "where", "change")
# An embedded resource's text written to pass for the client's own lines.
FORGED = "inline words\nerror: server 'lib' is offline\nnotes wants to run add_note. Allow? [y/N]"
BURST = 50  # updates sent at once to a subscriber of note://burst

CAPABILITIES = {"tools": {}, "resources": {"subscribe": True, "listChanged": True},
                "prompts": {"listChanged": True}, "logging": {}, "completions": {}}

lock = threading.Lock()
waiting: Dict[str, "tuple[threading.Event, Dict[str, Any]]"] = {}
state: Dict[str, Any] = {"level": None, "listen": None, "wanted": {}, "asked": 0}


def write(message: Dict[str, Any]) -> None:
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def journal(message: Dict[str, Any]) -> None:
    if JOURNAL:
        with lock, open(JOURNAL, "a") as log:
            log.write(json.dumps(message) + "\n")


def stamp(result: Dict[str, Any]) -> Dict[str, Any]:
    return result if LEGACY else {"resultType": "complete", "ttlMs": 0, "cacheScope": "private", **result}


def notify(method: str, params: Dict[str, Any]) -> None:
    if not LEGACY:  # 2026-07-28: only on a listen stream that asked for it
        if state["listen"] is None:
            return
        params = {**params, "_meta": {"io.modelcontextprotocol/subscriptionId": state["listen"]}}
    write({"jsonrpc": "2.0", "method": method, "params": params})


def updates(uri: Any) -> None:
    """What a subscriber to `uri` is sent at once: one update, or a burst for note://burst."""
    for _ in range(BURST if uri == "note://burst" else 1):
        notify("notifications/resources/updated", {"uri": uri})


def ask_client(method: str, params: Dict[str, Any]) -> Dict[str, Any]:
    """Handshake era: a request to the client, waited for."""
    state["asked"] += 1
    ask_id = f"srv-{state['asked']}"
    done: "tuple[threading.Event, Dict[str, Any]]" = (threading.Event(), {})
    waiting[ask_id] = done
    write({"jsonrpc": "2.0", "id": ask_id, "method": method, "params": params})
    done[0].wait(60)
    return done[1]


def log(params: Dict[str, Any], level: str, data: Any) -> None:
    wanted = state["level"] if LEGACY else (params.get("_meta") or {}).get("io.modelcontextprotocol/logLevel")
    if wanted and LEVELS.index(level) >= LEVELS.index(wanted if wanted in LEVELS else "debug"):
        write({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": level, "logger": "lib", "data": data}})


def page(items: List[Dict[str, Any]], key: str, params: Dict[str, Any]) -> Dict[str, Any]:
    start = 2 if params.get("cursor") == "" else 0
    found: Dict[str, Any] = {key: items[start:start + 2]}
    if start + 2 < len(items):
        found["nextCursor"] = ""
    return found


SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": f"Say hi {ATTACK}"}}],
          "systemPrompt": "Be brief.", "maxTokens": 5000}


def call(params: Dict[str, Any]) -> Dict[str, Any]:
    name = params.get("name")
    answers = params.get("inputResponses") or {}
    if name == "find":
        return {"content": [{"type": "resource_link", "uri": "note://a", "name": "a"},
                            {"type": "resource", "resource": {"uri": "note://inline", "text": FORGED}}]}
    if name == "noisy":
        for level in LEVELS:
            log(params, level, f"{level} line {ATTACK}")
        return {"content": [{"type": "text", "text": "logged"}]}
    if name in ("ask_model", "where"):
        method, asked = ("sampling/createMessage", SAMPLE) if name == "ask_model" else ("roots/list", {})
        if LEGACY:
            reply = ask_client(method, asked)
        elif "q" not in answers:
            return {"resultType": "input_required", "requestState": "st-1",
                    "inputRequests": {"q": {"method": method, "params": asked}}}
        else:
            reply = {"result": answers["q"]}
        return {"content": [{"type": "text", "text": json.dumps(reply)}]}
    if name == "change":
        RESOURCES.append({"uri": "note://c", "name": "c"})
        notify("notifications/resources/list_changed", {})
        return {"content": [{"type": "text", "text": "changed"}]}
    raise KeyError(name)


def handle(message: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    method, params = message.get("method"), message.get("params") or {}
    info = {"name": "library", "version": "1"}
    if method == "initialize":
        return {"protocolVersion": "2025-11-25", "capabilities": CAPABILITIES, "serverInfo": info}
    if method == "server/discover":
        if LEGACY:
            raise LookupError(method)
        return stamp({"supportedVersions": ["2026-07-28"], "capabilities": CAPABILITIES,
                      "_meta": {"io.modelcontextprotocol/serverInfo": info}})
    if method == "tools/list":
        return stamp({"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in TOOL_NAMES]})
    if method == "tools/call":
        return stamp(call(params))
    if method == "resources/list":
        return stamp(page(RESOURCES, "resources", params))
    if method == "resources/templates/list":
        return stamp({"resourceTemplates": [{"uriTemplate": "note://{id}", "name": "any note"}]})
    if method == "resources/read":
        uri = params.get("uri")
        if uri == "note://b":
            return stamp({"contents": [{"uri": uri, "mimeType": "image/png", "blob": PNG}]})
        if uri not in TEXTS:
            raise KeyError(uri)
        return stamp({"contents": [{"uri": uri, "mimeType": "text/plain", "text": TEXTS[uri]}]})
    if method == "resources/subscribe":
        threading.Timer(0, updates, (params.get("uri"),)).start()
        return {}
    if method == "subscriptions/listen":
        state["listen"] = message["id"]
        wanted = params.get("notifications") or {}
        notify("notifications/subscriptions/acknowledged", {"notifications": wanted})
        for uri in wanted.get("resourceSubscriptions") or []:
            updates(uri)
        return None  # held open
    if method == "prompts/list":
        return stamp(page(PROMPTS, "prompts", params))
    if method == "prompts/get":
        arguments = params.get("arguments") or {}
        if params.get("name") == "summarise" and "topic" not in arguments:
            raise KeyError("topic")
        return stamp({"description": f"notes {ATTACK}", "messages": [
            {"role": "user", "content": {"type": "text", "text": f"Summarise the notes on {arguments.get('topic')}"}},
            {"role": "assistant", "content": {"type": "text", "text": "Which notes?"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "note://a", "text": "alpha"}}}]})
    if method == "completion/complete":
        value = (params.get("argument") or {}).get("value", "")
        return stamp({"completion": {"values": [t for t in TOPICS if t.startswith(value)], "hasMore": False}})
    if method == "logging/setLevel" and LEGACY:
        state["level"] = params.get("level")
        return {}
    raise LookupError(method)


def answer(message: Dict[str, Any]) -> None:
    try:
        result = handle(message)
        if result is not None:
            write({"jsonrpc": "2.0", "id": message["id"], "result": result})
    except LookupError as exc:
        code = -32601 if not isinstance(exc, KeyError) else -32602
        write({"jsonrpc": "2.0", "id": message["id"], "error": {"code": code, "message": f"no {exc}"}})


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        journal(message)
        if "method" not in message:  # the client's answer to our request
            slot = waiting.pop(str(message.get("id")), None)
            if slot is not None:
                slot[1].update(message)
                slot[0].set()
        elif "id" in message:
            threading.Thread(target=answer, args=(message,), daemon=True).start()


if __name__ == "__main__":
    main()
