"""What the learner finds in each region of the starter: the one place the stubs are kept.

`python -m checks.dev.starter` builds `starter/` from `solution/` and puts each
region's stub here in place of the reference's body, indented as the region's
markers are. A stub is pedagogy, not a placeholder: it runs, it fails exactly
the items its region owns and for the reason the guide gives, and its TODO names
the guide's section that holds the clauses (a test keeps them in step).
"""

from __future__ import annotations

from typing import Dict

# Region ("1".."4" for the exercises, "E1".."E11" for the extensions; "reference
# FILE" for a part of the reference the learner's client does without) -> its
# stub, written as at the left margin.
STUBS: Dict[str, str] = {
    # __main__.py: the learner's client has the day's command line (cli.py)
    "reference __main__.py": """\
from .cli import main
""",
    # stdio_client.py
    "1": """\
# TODO exercise 1: only results are handled here. A reply that carries
# "error" falls through: nothing wakes its request, which then waits
# for its whole timeout. Reject the slot with the server's error
# (McpError.from_reply) and reject a reply that has neither member
# (ProtocolViolation).
# The clauses the checks hold it to: labs/GUIDE.md section 4.
if "result" in message:
    slot.resolve(message["result"])
""",
    # discovery.py
    "2": """\
# TODO exercise 2: this reads the first page only. Send each page's
# nextCursor back, exactly as received, until a page comes without one
# (or with null). Short and empty pages do not end the list. Give up with
# ProtocolViolation after max_pages pages.
# The clauses the checks hold it to: labs/GUIDE.md section 2.
page = await server.request("tools/list", {})
tools.extend(page_tools(page))
return tools
""",
    # naming.py
    "3": """\
# TODO exercise 3: return mcp__<alias>__<tool>. When that is not legal
# (characters outside [A-Za-z0-9_-], or longer than MAX_MODEL_NAME),
# replace every bad character (not only dots), cut it only as far as it
# must be (MAX_MODEL_NAME in all, hash included), and end it with "_" plus
# short_hash(alias, tool_name), so changed names stay unique.
# The clauses the checks hold it to: labs/GUIDE.md section 5.
return tool_name
""",
    # aggregator.py
    "4": """\
# TODO exercise 4: one failing server makes this whole refresh raise.
# Give each server its own time limit (self.discovery_timeout, with
# anyio: the checks run this on trio too) and its own try/except; record
# why it failed in offline[spec.alias] (errors.reason turns an exception
# into words) and carry on. Keep the task group: every server's
# discovery starts at once, so one that hangs holds up no other.
# The clauses the checks hold it to: labs/GUIDE.md section 6.
async def connect_one(spec: ServerSpec) -> None:
    found[spec.alias] = await self.connect(spec)

async with anyio.create_task_group() as group:
    for spec in self.eager_servers():
        group.start_soon(connect_one, spec)
""",
    # consent.py
    "E1": """\
# TODO extension E1: every call runs without asking. Let only read-only
# tools (readOnlyHint true) from trusted servers through; everything else asks.
# The clauses the checks hold it to: labs/GUIDE.md section 11.1.
return True
""",
    # aggregator.py
    "E2": """\
# TODO extension E2: the change is ignored, so the model keeps an old
# table. Re-list that server in the background (self._relist) and rebuild.
# The clauses the checks hold it to: labs/GUIDE.md section 11.2.
return
""",
    # stdio_client.py
    "E3": """\
# TODO extension E3: progress is dropped. Find the handler registered for
# params["progressToken"] in self._progress and call it, and note when the
# report came in self._progress_at[token] (the reference client's wait reads it
# for progressResetsTimeout; E3 runs your routing inside that wait).
# The clauses the checks hold it to: labs/GUIDE.md section 11.3.
return
""",
    # meta_tools.py
    "E4": """\
# TODO extension E4: search_tools finds nothing. Score each entry by the
# query words found in it: 3 per word in its name, 2 in its title, 1 in its
# description, all three the server's own (entry.original_name, entry.tool:
# its "title", not annotations.title; a title or description that is not a
# string is none). Best first, ties in catalogue order, no match left out.
# The clauses the checks hold it to: labs/GUIDE.md section 11.4.
return []
""",
    # tool_calls.py
    "E5": """\
# TODO extension E5: the program gets no data. Return the result's
# structuredContent as it came (call_tool already checked it against any
# outputSchema), or None for an error result or when there is no entry.
# The clauses the checks hold it to: labs/GUIDE.md section 11.5.
return None
""",
    # tasks.py
    "E6": """\
# TODO extension E6: a task is finished when its status is completed, failed or
# cancelled. Return the tool result it stands for (state.result when completed;
# an error_result saying why when failed or cancelled) and None while it is
# still working or waiting for input (labs/GUIDE.md 11.6). Every word of the
# server's you put in a result may be any length and hold escape codes: pass
# it to shown(text, limit), which cuts what it shows (never cut before it: an
# escape grows when shown), with ID_CHARS for the task id and REASON_CHARS for
# a code, a message or a statusMessage.
# The clauses the checks hold it to: labs/GUIDE.md section 11.6.
raise NotImplementedError("extension E6: decide when a task has finished (labs/GUIDE.md 11.6)")
""",
    # elicitation.py
    "E7": """\
# TODO extension E7: turn one property of the requested schema into a FormField:
# a string (with a known format, or a choice when it lists values), a number or
# integer (with its bounds), a boolean, or an array of choices, labelled with its
# title as text (the property's name when it has none). Anything else: raise
# Unsupported with the reason (labs/GUIDE.md 11.7). Flag it secret when
# SECRET_NAME matches the name or SECRET_WORDS matches its title, description
# or the schema's format (whatever the kind), each text on its own, as the
# patterns are given. Read the schema; never write into it.
# The clauses the checks hold it to: labs/GUIDE.md section 11.7.
raise Unsupported(f"extension E7 is not done yet: field {name!r} cannot be shown")
""",
    # stubs.py
    "E8": """\
# TODO extension E8: return "Literal[...]" listing the values as Python source
# (str, int, bool and None can be Literal values), or None when a value cannot
# be one (a float, a list, an object). Until then every enum is typed Any, and
# the type check lets any value through (labs/GUIDE.md 11.8).
# The clauses the checks hold it to: labs/GUIDE.md section 11.8.
return None
""",
    # sse.py
    "E9": """\
# TODO extension E9: read one line of an event stream (labs/GUIDE.md section 11.9).
# A blank line ends the event: return self._dispatch(). A line that starts with ":"
# is a comment. Any other line is "field: value" (one space after the colon is not
# part of the value): "data" values gather in self._data, "event" sets self._type,
# "id" sets self.last_id (unless it holds a NUL), "retry" sets self.retry_ms (digits
# only, at most RETRY_DIGITS of them); any other field is ignored.
# The clauses the checks hold it to: labs/GUIDE.md section 11.9.
return None
""",
    # resource_links.py
    "E10": """\
# TODO extension E10: decide which server a URI the model asks for is read from
# (labs/GUIDE.md section 11.10). self._by_uri maps each URI offered in this run to
# the aliases that offered it, first first. Return (alias, "") to read it, or
# (None, why) to refuse without a request, with the reason below for each, in this order:
# no string uri (NO_URI); nobody offered it, whatever server is named (offered_by_none);
# a server named (a non-empty string) that did not offer it (not_offered_by); several
# offered it and none is named (offered_by_several).
# The clauses the checks hold it to: labs/GUIDE.md section 11.10.
raise NotImplementedError("extension E10: decide which server a linked URI is read from "
                          "(labs/GUIDE.md section 11.10)")
""",
    # sampler.py
    "E11": """\
# TODO extension E11: answer a server's sampling request (labs/GUIDE.md section 11.11).
# Take one from self.budget, read the request (sampling_ask), and inside one
# self.terminal.turn(...) show describe_ask and ask; only after a yes (approved) ask
# the model (conversation; capped to ask.max_tokens), cut the reply (cut_reply), show
# describe_reply and ask again; only after that yes return reply_result. Any other
# answer raises Declined (asked once: no is no). A failing model's error goes out as it
# is, not as Declined: the person did not say no.
# The clauses the checks hold it to: labs/GUIDE.md section 11.11.
raise Declined("extension E11: answer a sampling request only with the person's approval "
               "(labs/GUIDE.md section 11.11)")
""",
}
