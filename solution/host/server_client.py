"""The reference client's connection to one server: the core's stdio client, and more.

What the core leaves out, each plugged into the one method of StdioClient that
is there for it:

- `on_server_request`: a server's questions are answered (forms, sampling,
  roots; lifecycle/server_requests.py), a few at a time, more refused as busy
  (`Admission`), so a flood costs the server, not the client;
- `capabilities`: what something in the client stands behind is declared
  (lifecycle/capabilities.py), and only that;
- `envelope`: with `--log-level`, every 2026-07-28 request asks for the
  server's log messages at that level;
- `wait_for_reply`: where the config says `progressResetsTimeout`, a request
  keeps waiting past its timeout as long as progress keeps coming;
- `spawn` and `released`: the server is bound to die with the client, and a
  watchdog ends what it started (process.py).

The remote transport (remote/http_client.py) builds on this class in turn.
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import anyio
from anyio.abc import Process

from ..config import ServerSpec
from ..discovery import with_envelope
from ..elicitation import Elicitor
from ..errors import ServerGone
from ..jsonrpc import Json, Pending, RequestId
from ..lifecycle.capabilities import client_capabilities
from ..lifecycle.roots import Roots
from ..lifecycle.server_log import LOG_LEVEL_KEY
from ..lifecycle.server_requests import Admission, Handling, answer_server_request, busy_reply
from ..sampler import Sampler
from ..stdio_client import CLOSE_GRACE, DEFAULT_TIMEOUT, StdioClient
from . import process
from .config import host_options


class ServerClient(StdioClient):
    def __init__(self, spec: ServerSpec, *, request_timeout: float = DEFAULT_TIMEOUT,
                 close_grace: float = CLOSE_GRACE) -> None:
        super().__init__(spec, request_timeout=request_timeout, close_grace=close_grace)
        self.options = host_options(spec)
        # Who answers the server's questions (forms, sampling, roots); None: nobody,
        # and then that capability is never declared (capabilities.py).
        self.elicitor: Optional[Elicitor] = None
        self.sampler: Optional[Sampler] = None
        self.roots: Optional[Roots] = None
        self.log_level: Optional[str] = None  # 2026-07-28: log messages wanted at or above this (server_log.py)
        self.admission = Admission()  # how many of the server's own requests are in hand

    @property
    def capabilities(self) -> Json:
        """What this client declares, in its era (capabilities.py says when each is)."""
        return client_capabilities(self.era, forms=self.elicitor is not None, sampling=self.sampler is not None,
                                   roots=self.roots is not None)

    def envelope(self, params: Optional[Json]) -> Json:
        return with_envelope(params, self.capabilities, {LOG_LEVEL_KEY: self.log_level} if self.log_level else None)

    async def spawn(self, argv: Sequence[str], cwd: Optional[str], env: Mapping[str, str]) -> Process:
        return await process.spawn(argv, cwd, env)

    def released(self, server: Process) -> None:
        process.released(server)

    async def wait_for_reply(self, request_id: RequestId, slot: Pending, limit: float) -> None:
        """Past the timeout, keep waiting as long as progress keeps coming: each
        report starts the clock again (only when the config asks for it)."""
        await super().wait_for_reply(request_id, slot, limit)
        if not self.options.progress_resets_timeout:
            return
        while not slot.done.is_set():
            last = self._progress_at.get(request_id)
            if last is None or last + limit <= anyio.current_time():
                return
            with anyio.move_on_after(last + limit - anyio.current_time()):
                await slot.done.wait()

    def on_server_request(self, message: Json) -> None:
        """An answer, or in a flood a refusal, judged now, as it arrives."""
        if self._task_group is None:
            return
        handling = self.admission.admit()
        if handling is not None:
            self._task_group.start_soon(self._answer_server, message, len(self._pending) > 0, handling)

    async def _answer_server(self, message: Json, busy: bool, handling: Handling) -> None:
        """Reply to a request the server sent (server_requests.py decides how)."""
        try:
            if handling == "answer":
                reply = await answer_server_request(self.alias, self.elicitor, message, busy,
                                                    sampler=self.sampler, roots=self.roots)
            else:
                reply = busy_reply(message)
            await self._send(reply)
        except ServerGone:
            pass  # it left before hearing back
        finally:
            self.admission.done(handling)
