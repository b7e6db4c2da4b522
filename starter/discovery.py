"""Discovery: which era a server speaks, who it is, and every tool it offers.

The two eras first. In MCP 2026-07-28 every request carries an envelope
(`params._meta`: the protocol version, the client's capabilities and its
identity, `with_envelope`) and every result says whether it is complete
(`resultType`, `complete_result`); the 2025-11-25 era instead agrees on these
once, in the `initialize` handshake.

`discover` follows the stdio rule for telling the eras apart: probe with
`server/discover`; a result (or `-32022` naming only current versions) means
the server speaks 2026-07-28; any other error means an older server, which
gets the `initialize` handshake on the same process. Silence is the hard
case: a server may be slow to start, or old and deaf to unknown methods. So
the probe is awaited for the server's whole timeout, and after `probe_timeout`
of silence the handshake is tried beside it; whichever answer proves the era
wins. A late discover result is never thrown away, and a current server that
refuses the handshake (`-32022`) is simply waited for.

Both functions take anything shaped like the stdio client (`request`,
`notify`, `era`), so they are tested with a scripted fake, not a process.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Protocol, Tuple

import anyio

from .errors import ClientError, McpError, ProtocolViolation, RequestTimeout
from .jsonrpc import Json

PROTOCOL_VERSION = "2026-07-28"
# The handshake era, for servers that predate 2026-07-28 (most of those running today).
LEGACY_VERSION = "2025-11-25"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
UNSUPPORTED_VERSION = -32022
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
CLIENT_INFO: Json = {"name": "mcp-client-lab", "version": "1.0.0"}

MAX_PAGES = 100  # a server that pages forever is a broken server
PROBE_TIMEOUT = 5.0  # silence this long, and the handshake is tried beside the probe


# Built once: the envelope is the same on every request that declares nothing.
_META: Json = {
    VERSION_KEY: PROTOCOL_VERSION,
    CAPABILITIES_KEY: {},
    CLIENT_INFO_KEY: CLIENT_INFO,
}


def with_envelope(params: Optional[Json], capabilities: Optional[Json] = None,
                  meta: Optional[Json] = None) -> Json:
    """`params` plus the `_meta` keys every 2026-07-28 request must carry;
    `capabilities` are this client's, declared on each request (none by default);
    `meta`: more keys for this request's `_meta` (the reference asks for logs so)."""
    envelope = _META if not capabilities else {**_META, CAPABILITIES_KEY: capabilities}
    if meta:
        envelope = {**envelope, **meta}
    if not params:
        return {"_meta": envelope}  # shared, never mutated: it is only serialised
    own = params.get("_meta")
    return {**params, "_meta": {**own, **envelope} if own else envelope}


COMPLETE = ("complete",)  # the kind of result every caller handles


def complete_result(method: str, result: Any, accept: Tuple[str, ...] = COMPLETE) -> Json:
    """Check a result's `resultType` (a missing one means complete) against the
    kinds the caller handles (`accept`). The reference's tool calls also take
    `input_required` and `task`; any other kind is unknown to the caller, and
    reported rather than guessed at."""
    if not isinstance(result, dict):
        raise ProtocolViolation(f"{method}: the result is not a JSON object")
    kind = result.get("resultType", "complete")
    if kind in accept:
        return result
    raise ProtocolViolation(f"{method}: unsupported resultType {kind!r}")


class Requester(Protocol):
    era: str

    async def request(self, method: str, params: Optional[Json] = None, *,
                      timeout: Optional[float] = None) -> Json: ...

    async def notify(self, method: str, params: Optional[Json] = None) -> None: ...


@dataclass
class ServerInfo:
    """What discovery found out; identity is for display only."""

    name: str
    version: str
    instructions: str = ""
    capabilities: Dict[str, Any] = field(default_factory=dict)
    supported_versions: List[str] = field(default_factory=list)
    era: str = "current"  # "current" (2026-07-28) or "legacy" (the initialize handshake)
    protocol_version: str = PROTOCOL_VERSION


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _object(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}


async def discover(server: Requester, *, probe_timeout: float = PROBE_TIMEOUT,
                   fallback: bool = True) -> ServerInfo:
    """Find the server's era and identity, doing the legacy handshake if needed
    (never, with `fallback=False`: a server pinned to 2026-07-28). Each request
    waits for the client's own timeout."""
    answers: Dict[str, Any] = {}  # "probe" / "handshake" -> a result (Json or ServerInfo) or an error
    changed = anyio.Event()

    async def ask(key: str) -> None:
        try:
            answers[key] = await (server.request("server/discover") if key == "probe" else handshake(server))
        except ClientError as exc:
            answers[key] = exc
        changed.set()

    found: "ServerInfo | ClientError | None" = None
    async with anyio.create_task_group() as group:
        group.start_soon(ask, "probe")
        with anyio.move_on_after(probe_timeout):
            await changed.wait()
        while found is None:
            found = decide(answers, fallback)
            if found is None:
                if fallback and "handshake" not in answers and "shaking" not in answers:
                    answers["shaking"] = True  # silent after probe_timeout, or refused: try the old way
                    group.start_soon(ask, "handshake")
                changed = anyio.Event()
                await changed.wait()  # bounded: each request has its own timeout
        group.cancel_scope.cancel()  # the other question, if still open, is abandoned
    if isinstance(found, ServerInfo):
        server.era = found.era
        return found
    raise found or ProtocolViolation("discovery ended without an answer")  # (the loop ends only with one)


def decide(answers: Dict[str, Any], fallback: bool = True) -> "ServerInfo | ClientError | None":
    """What the answers so far prove: the server's info, a failure, or nothing yet."""
    probe, shake = answers.get("probe"), answers.get("handshake")
    if not fallback and isinstance(probe, ClientError):
        return probe
    if isinstance(probe, dict):  # 2026-07-28, however late the answer came
        try:
            return from_discover(probe)
        except ClientError as exc:
            # A lenient handshake-era server answers any method with {}: a result
            # that does not name our version leads to the handshake, never offline.
            if not fallback or isinstance(shake, ClientError):
                return exc if not isinstance(shake, ClientError) else failure(exc, shake)
            if not isinstance(shake, ServerInfo):
                return None
    if isinstance(shake, ServerInfo):
        return shake
    if isinstance(probe, McpError) and not speaks_handshake(probe):
        return ProtocolViolation(f"no protocol version in common: the server speaks "
                                 f"{_object(probe.data).get('supported')!r}; this client speaks "
                                 f"{PROTOCOL_VERSION} (or {LEGACY_VERSION} by the initialize handshake)")
    if probe is not None and shake is not None:  # both failed: say what each did
        return failure(probe, shake)
    return None


def speaks_handshake(error: McpError) -> bool:
    """Whether a refused probe leaves the handshake to try: any error but a
    -32022 whose list of versions has none of the handshake era's."""
    if error.code != UNSUPPORTED_VERSION:
        return True
    offered = _object(error.data).get("supported")
    return isinstance(offered, list) and any(v in HANDSHAKE_VERSIONS for v in offered)


def failure(probe: Any, shake: Any) -> ClientError:
    if isinstance(probe, RequestTimeout) and isinstance(shake, RequestTimeout):
        return RequestTimeout("server/discover or initialize", probe.timeout)
    if isinstance(shake, McpError) and shake.code == UNSUPPORTED_VERSION and isinstance(probe, ClientError):
        return probe  # a current server (it refused the handshake) whose probe failed: that is the story
    return shake if isinstance(shake, ClientError) else probe


def from_discover(result: Json) -> ServerInfo:
    versions = result.get("supportedVersions")
    if not isinstance(versions, list) or PROTOCOL_VERSION not in versions:
        raise ProtocolViolation(
            f"server does not support {PROTOCOL_VERSION} (it supports {versions!r})")
    info = _object(_object(result.get("_meta")).get(SERVER_INFO_KEY))
    return ServerInfo(name=_text(info.get("name")), version=_text(info.get("version")),
                      instructions=_text(result.get("instructions")),
                      capabilities=_object(result.get("capabilities")),
                      supported_versions=[str(v) for v in versions])


async def handshake(server: Requester) -> ServerInfo:
    """The 2025-11-25 `initialize` handshake; afterwards requests carry no envelope."""
    server.era = "legacy"
    # What the client declares (form elicitation when it can answer); era is
    # already legacy, so this is the handshake's set.
    capabilities = getattr(server, "capabilities", {})
    result = await server.request("initialize", {"protocolVersion": LEGACY_VERSION,
                                                 "capabilities": capabilities, "clientInfo": CLIENT_INFO})
    version = result.get("protocolVersion")
    if version not in HANDSHAKE_VERSIONS:
        raise ProtocolViolation(f"initialize: the server answered with protocol version {version!r}, "
                                f"which this client does not speak ({', '.join(HANDSHAKE_VERSIONS)})")
    await server.notify("notifications/initialized")
    info = _object(result.get("serverInfo"))
    return ServerInfo(name=_text(info.get("name")), version=_text(info.get("version")),
                      instructions=_text(result.get("instructions")),
                      capabilities=_object(result.get("capabilities")),
                      supported_versions=[str(version)], era="legacy", protocol_version=str(version))


async def list_all_tools(server: Requester, *, max_pages: int = MAX_PAGES) -> List[Json]:
    """Every tool the server offers, following `nextCursor` page by page."""
    tools: List[Json] = []
    # >>> exercise 2 (item 3): follow the cursor until there is none
    # TODO exercise 2: this reads the first page only. Send each page's
    # nextCursor back, exactly as received, until a page comes without one
    # (or with null). Short and empty pages do not end the list. Give up with
    # ProtocolViolation after max_pages pages.
    # The clauses the checks hold it to: labs/GUIDE.md section 2.
    page = await server.request("tools/list", {})
    tools.extend(page_tools(page))
    return tools
    # <<< exercise 2


def page_tools(page: Json) -> List[Json]:
    """The tools of one `tools/list` page, checked for the fields we rely on."""
    tools = page.get("tools")
    if not isinstance(tools, list):
        raise ProtocolViolation("tools/list result has no 'tools' list")
    for tool in tools:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            raise ProtocolViolation(f"tools/list returned a tool without a name: {tool!r:.80}")
    return tools
