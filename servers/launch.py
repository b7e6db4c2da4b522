"""Starting a fixture server: its switches applied, its era's front, and the
shell that serves it (stdio, or HTTP with `--http`).

Apart from both shells so that neither imports the other: the HTTP shell
builds on the stdio one, and only this module chooses between them.
"""

from __future__ import annotations

import os
import sys
from typing import List, NoReturn, Optional

from servers.core import Server
from servers.legacy import LegacyFront
from servers.stdio import Front, StdioShell
from servers.switches import SWITCHED, parse_options, parser
from servers.tasks import TaskBoard


def run(server: Server, argv: Optional[List[str]] = None) -> NoReturn:
    options = parse_options(server.name, argv)
    for switch in SWITCHED:
        if getattr(options, switch.replace("-", "_")):
            add = server.switchable.get(switch)
            if add is None:
                parser(server.name).error(f"--{switch}: the {server.name} fixture has nothing behind this switch")
            add()
    server.paging = options.paging
    server.list_ttl_ms = options.list_ttl_ms
    server.progress_steps, server.progress_gap = options.progress_steps, options.progress_gap
    server.task_steps, server.task_gap = options.task_steps, options.task_gap
    if options.page_size is not None:
        server.set_page_size(max(1, options.page_size))
    for extra in options.add_tool:
        server.add_tool(extra)  # re-pages the list too
    for name, annotations in options.annotations:
        for tool in server.tools:
            if tool.name == name:
                tool.annotations = annotations
    front: Front = LegacyFront(server) if options.era == "legacy" else server
    if options.http is not None:
        from servers.over_http import HttpShell  # the HTTP transport, loaded only when asked for
        shell: StdioShell = HttpShell(front, options)
    else:
        shell = StdioShell(front, options)
    server.on_change = shell.tools_changed
    server.on_resources = shell.resources_changed
    server.ask_client = shell.ask_client
    server.record = server.logs.record = shell.journal.record
    server.logs.send = shell.write  # over HTTP: into the stream of the request that logs
    if any(tool.job is not None for tool in server.tools):
        board = TaskBoard(legacy=options.era == "legacy", ttl_ms=options.task_ttl_ms,
                          poll_ms=options.task_poll_ms)
        board.on_event = shell.journal.record
        board.asker = shell.ask_client
        board.notify = lambda task: shell.write({"jsonrpc": "2.0", "method": "notifications/tasks/status",
                                                 "params": task})
        server.tasks = board
    status = shell.serve()
    sys.stdout.flush()
    # Daemon threads may still sleep on a simulated latency; nothing they
    # could write is wanted after stdin closed, so leave at once.
    os._exit(status)
