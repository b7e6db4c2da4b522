"""What this client tells a server it can do, in either era: declared in one place,
and only for what something in the client stands behind.

- tasks (2026-07-28's extension): always, since the client can follow them; the
  handshake era has no client flag for calling tools as tasks.
- form elicitation: when something answers servers' questions (a terminal).
- sampling: when a model is configured and a person can approve each request
  (or the user opted in), see sampler.py.
- roots: when the client has roots to give. 2026-07-28 has no roots
  notification, so there the capability is `{}`; in the handshake era it says
  `listChanged: true`, since a library caller may change the roots while
  connected (`Aggregator.set_roots`) and each handshake-era server then hears
  `notifications/roots/list_changed`.
"""

from __future__ import annotations

from ..jsonrpc import Json
from ..task_calls.support import EXTENSION as TASKS_EXTENSION


def client_capabilities(era: str, *, forms: bool = False, sampling: bool = False, roots: bool = False) -> Json:
    """The `clientCapabilities` (or the handshake's `capabilities`) for `era`."""
    declared: Json = {} if era == "legacy" else {"extensions": {TASKS_EXTENSION: {}}}
    if forms:
        declared["elicitation"] = {"form": {}}
    if sampling:
        declared["sampling"] = {}  # text only: no `context` (deprecated), no `tools`
    if roots:
        declared["roots"] = {"listChanged": True} if era == "legacy" else {}
    return declared
