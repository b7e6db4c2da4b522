"""Extension item E9: remote servers over Streamable HTTP, whose answers come as
event streams written with every liberty the format allows, and a stream that
ends early and must be resumed from its last event.

The judge starts both fixtures itself (a remote server is not the client's to
start): the note library in the current era (`--sse`), and the ticket system in
the handshake era, whose call of close_ticket ends its stream after a priming
event (`--sse-break`). One page each (`--page-size 10`) and no shared tool but
`search`, so E9 depends on its own region only.
"""

from __future__ import annotations

from checks.exercises import EXTENSIONS
from checks.fixtures import Lab
from checks.harness import Fail
from checks.items.evidence import aggregator_for, describe, found, point, refreshed, result_of, text
from checks.target import Target


async def remote(target: Target, lab: Lab) -> str:
    where = point(target, EXTENSIONS["E9"])
    notes = await lab.http_server("notes", "remote", "--sse", "--page-size", "10")
    tickets = await lab.http_server("tickets", "archive", "--sse", "--era", "legacy", "--page-size", "10",
                                    "--sse-break", "close_ticket")
    async with await aggregator_for(target, lab, [notes, tickets], reference=True) as tools:
        try:
            await refreshed(target, tools)
        except Fail:
            raise
        except Exception as exc:  # the starter's refresh lets a server's failure through
            raise unread(lab, "remote", f"refresh() raised {describe(exc)}", where) from None
        for alias in ("remote", "archive"):
            if alias in tools.offline:
                raise unread(lab, alias, f"offline: {str(tools.offline[alias])[:200]}", where)
        entry = found(tools, "remote", "search", EXTENSIONS["E9"])
        result = await tools.call(entry.model_name, {"query": "paging"})
        sent = result_of(lab.journal("remote"), "search")
        if result.get("isError") or text(result) != text(sent):
            raise Fail(f"expected: the result the server streamed: {text(sent)[:120]!r}\n"
                       f"got: {str(result)[:160]}{where}")
        entry = found(tools, "archive", "close_ticket", EXTENSIONS["E9"])
        closed = await tools.call(entry.model_name, {"ticket_id": "T-101"})
        journal = lab.journal("archive")
        ended = [e for e in journal.entries() if e.kind == "stream-closed"]
        resumes = [e for e in journal.entries() if e.kind == "resume"]
        if not ended:
            raise Fail(f"expected: archive received the call of close_ticket\ngot: it never did "
                       f"(the call returned {str(closed)[:120]}){where}")
        last, retry_ms = ended[-1].raw.get("last_event_id"), float(ended[-1].raw.get("retry_ms", 0))
        if not resumes:
            raise Fail(f"expected: after the stream ended, a GET with Last-Event-ID: {last} once "
                       f"retry ({retry_ms:g} ms) has passed\njournal: archive ended the stream of close_ticket "
                       f"after event {last} (id: {last}, retry: {retry_ms:g}) and was never asked to resume it\n"
                       f"got: {str(closed)[:160]}{where}")
        asked = resumes[0]
        if asked.raw.get("last_event_id") != last:
            raise Fail(f"expected: the GET resumes after the stream's last event id, {last!r}\n"
                       f"journal: archive was asked to resume after {asked.raw.get('last_event_id')!r}\n"
                       f"got: the id field was not kept as sent{where}")
        waited = asked.t - ended[-1].t
        if waited < retry_ms / 1000:
            raise Fail(f"expected: the GET waits the retry the server gave ({retry_ms:g} ms)\n"
                       f"journal: archive ended the stream, then was asked to resume {waited * 1000:.0f} ms later\n"
                       f"got: the retry field was not used{where}")
        owed = result_of(journal, "close_ticket")
        if closed.get("isError") or text(closed) != text(owed):
            raise Fail(f"expected: the reply that came on the resumed stream: {text(owed)[:120]!r}\n"
                       f"got: {str(closed)[:160]}{where}")
    return (f"both remote servers discovered from noisy event streams; search answered as streamed; the "
            f"ended stream resumed after {last} once its {retry_ms:g} ms retry had passed "
            f"({waited * 1000:.0f} ms); close_ticket's reply came on the resumed stream")


def unread(lab: Lab, alias: str, got: str, where: str) -> Fail:
    answered = len([e for e in lab.journal(alias).entries() if e.kind == "out"])
    return Fail(f"expected: the server at its URL is discovered from its answers, which come as event streams\n"
                f"journal: {alias} answered {answered} request(s), each as an event stream (comments, CRLF, a "
                f"message over two data lines, an id on every event)\n"
                f"got: {got}: no message was read from those streams{where}")
