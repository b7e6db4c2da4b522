"""The lab's catalogue of learner mutants: wrong answers a learner would write
(and lazy and faked ones), each with the item it must turn red and the words
its failure message must hold, so that red is red for the right reason.

Each is an edit of the reference solution: `old` (found exactly once in
`file`) becomes `new`. Most edit a region; the faked clients edit the code
around one, as a learner who works around a check would. CI judges every entry
(`python -m checks.dev.mutants --catalogue`), and the tests hold them too.
"""

from __future__ import annotations

from typing import Tuple

from checks.dev.mutants.extension_mutants import EXTENSION_MUTANTS
from checks.dev.mutants.learner import LearnerMutant as LearnerMutant  # where the catalogue is read from

HANDLED = '''        if "result" in message:
            slot.resolve(message["result"])
        elif "error" in message:
'''

BARE = "            slot.reject(ProtocolViolation(\"a reply with neither 'result' nor 'error'\"))\n"

NAMED = '''    legal = _ILLEGAL.sub("_", name)
    if legal == name and len(name) <= MAX_MODEL_NAME:
        return name
'''

LIMITED = '''                with anyio.fail_after(self.discovery_timeout):
                    found[spec.alias] = await self.connect(spec)
'''

PAGER = '''    cursor: Optional[str] = None
    for _ in range(max_pages):
        params: Json = {} if cursor is None else {"cursor": cursor}
        page = await server.request("tools/list", params)
        tools.extend(page_tools(page))
        # Only a missing (or null) nextCursor ends the list: not a short page,
        # not an empty one. "" is a real cursor. Pass it back untouched.
        cursor = page.get("nextCursor")
        if cursor is None:
            return tools
'''

PAGER_BY_KEY = '''    params: Json = {}
    for _ in range(max_pages):
        page = await server.request("tools/list", params)
        tools.extend(page_tools(page))
        if "nextCursor" not in page:
            return tools
        params = {"cursor": page["nextCursor"]}
'''


CATALOGUE: Tuple[LearnerMutant, ...] = (
    # -- exercise 1: a reply carries either a result or an error -----------------
    LearnerMutant("only results are handled (the starter)", "1",
                  HANDLED + "            slot.reject(McpError.from_reply(message[\"error\"]))\n        else:\n" + BARE,
                  '        if "result" in message:\n            slot.resolve(message["result"])\n',
                  "2", ("its error reply was read and dropped",)),
    LearnerMutant("a truthy test for the result: {} is taken for no result", "1",
                  HANDLED, '        if message.get("result"):\n            slot.resolve(message["result"])\n'
                           '        elif message.get("error"):\n',
                  "2", ("empty result {} is a result", "notes/flush")),
    LearnerMutant("a reply with neither member is dropped", "1", "        else:\n" + BARE, "",
                  "2", ("notes/status was still waiting: that reply was dropped",)),
    LearnerMutant("a reply with neither member resolves as a result", "1", BARE,
                  '            slot.resolve(message.get("result", {"resultType": "complete"}))\n',
                  "2", ("expected: ProtocolViolation", "a result {")),
    # -- exercise 2: follow nextCursor to the last page ---------------------------
    LearnerMutant("the pager stops on an empty cursor", "2", "        if cursor is None:\n",
                  "        if not cursor:\n", "3", ("nextCursor ''", 'or "")')),
    LearnerMutant("the pager has no page limit", "2", "    for _ in range(max_pages):\n",
                  "    for _ in iter(int, 1):  # forever\n", "3", ("stopped after max_pages=5 pages",
                                                                 "received 40 tools/list requests")),
    LearnerMutant("the pager reads one page and fakes the rest", "2",
                  "        cursor = page.get(\"nextCursor\")\n",
                  "        cursor = None\n        tools.extend({\"name\": \"add_note\", \"inputSchema\": {}}"
                  " for _ in range(1) if \"add_note\" not in str(tools))\n",
                  "3", ("1 tools/list request(s)", "nextCursor ''")),
    LearnerMutant("only an absent nextCursor ends the list: null is sent back", "2", PAGER, PAGER_BY_KEY,
                  "3", ("clause 2.1", '"cursor": null')),
    LearnerMutant("a nextCursor that is not a string taken for the end", "2", "        if cursor is None:\n",
                  "        if not isinstance(cursor, str):\n", "3", ("clause 2.2", "nextCursor 0")),
    # -- exercise 3: prefix, cut and hash -----------------------------------------
    LearnerMutant("no prefix: the tool's own name", "3", NAMED, "    return tool_name\n", "5",
                  ("one search shadows the other",)),
    LearnerMutant("the hash only when the name is cut", "3", NAMED,
                  "    legal = _ILLEGAL.sub(\"_\", name)\n    if len(legal) <= MAX_MODEL_NAME:\n        return legal\n",
                  "6", ("mcp__tickets__queue_stats' is already taken by tickets/queue.stats",)),
    LearnerMutant("only dots replaced", "3", NAMED,
                  '    legal = name.replace(".", "_")\n    if "." not in name and len(name) <= MAX_MODEL_NAME:\n'
                  '        return name\n', "6", ("not only dots", "' ' not allowed")),
    LearnerMutant("\\w lets letters beyond ASCII through", "3", NAMED,
                  '    legal = re.sub(r"[^\\w-]", "_", name)\n    if legal == name and len(name) <= MAX_MODEL_NAME:\n'
                  '        return name\n', "6", ("'é' not allowed",)),
    LearnerMutant("a namer that checks legality with $, which matches before a final newline", "3", NAMED,
                  '    legal = _ILLEGAL.sub("_", name)\n    if re.match(r"^[A-Za-z0-9_-]{1,64}$", name):\n'
                  '        return name\n', "6", ("clause 3.1", "report\\n")),
    LearnerMutant("the hash of the changed name, not of the name the server sent", "3",
                  "    return f\"{legal[:keep]}_{short_hash(alias, tool_name)}\"\n",
                  "    return f\"{legal[:keep]}_{short_hash(alias, legal[len(alias) + 7:])}\"\n", "6",
                  ("a hash of the changed name",)),
    # -- exercise 4: a limit and a try/except per server ----------------------------
    LearnerMutant("no limit on each server's discovery", "4", LIMITED,
                  "                found[spec.alias] = await self.connect(spec)\n", "8",
                  ("it came online", "self.discovery_timeout")),
    LearnerMutant("one time limit around the whole discovery", "4",
                  LIMITED + "            except Exception as exc:  # any failure: record why, keep the rest\n"
                  "                offline[spec.alias] = reason(exc)\n\n"
                  "        async with anyio.create_task_group() as group:\n",
                  "                found[spec.alias] = await self.connect(spec)\n"
                  "            except Exception as exc:  # any failure: record why, keep the rest\n"
                  "                offline[spec.alias] = reason(exc)\n\n"
                  "        with anyio.move_on_after(self.discovery_timeout):\n"
                  "          async with anyio.create_task_group() as group:\n", "8",
                  ("neither connected nor in the offline table",)),
    LearnerMutant("no try/except: one failure sinks the refresh", "4",
                  "            except Exception as exc:  # any failure: record why, keep the rest\n",
                  "            except ArithmeticError as exc:\n", "8", ("sank the whole refresh",)),
    LearnerMutant("the reason as str(exc): a timeout's is empty", "4",
                  "                offline[spec.alias] = reason(exc)\n", "                offline[spec.alias] = str(exc)\n",
                  "8", ("its reason is ''", "reason(exc) does")),
    LearnerMutant("BaseException caught: the user's Ctrl-C written down as a server's failure", "4",
                  "            except Exception as exc:  # any failure: record why, keep the rest\n",
                  "            except BaseException as exc:\n", "8", ("clause 4.4", "raised KeyboardInterrupt")),
    LearnerMutant("the reason cut to 60 characters", "4", "                offline[spec.alias] = reason(exc)\n",
                  "                offline[spec.alias] = reason(exc)[:60]\n", "8",
                  ("clause 4.2", "short of reason(exc)", "notes_db")),
    LearnerMutant("the server's own (per-request) timeout taken as its discovery's limit", "4", LIMITED,
                  "                with anyio.fail_after(spec.timeout or self.discovery_timeout):\n"
                  "                    found[spec.alias] = await self.connect(spec)\n", "8",
                  ("clause 4.3", "its own timeout 1 s")),
    # Round 3 of the blind review: wrong answers written from the guide alone that were green.
    LearnerMutant("a page that times out ends the list with the tools so far", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        try:\n            page = await server.request(\"tools/list\", params)\n"
                  "        except RequestTimeout:\n            return tools\n", "3", ("clause 2.4", "timed out instead")),
    LearnerMutant("a server gone in the middle of the list leaves its tools so far", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        try:\n            page = await server.request(\"tools/list\", params)\n"
                  "        except ClientError as exc:\n            if type(exc).__name__ != \"ServerGone\":\n"
                  "                raise\n            return tools\n", "3", ("clause 2.4", "the server gone instead")),
    LearnerMutant("-32601 on a later page read as the end of the list", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        try:\n            page = await server.request(\"tools/list\", params)\n"
                  "        except McpError as exc:\n            if exc.code != -32601:\n                raise\n"
                  "            return tools\n", "3", ("clause 2.4", "-32601")),
    LearnerMutant("a page page_tools refuses skipped, the others kept", "2",
                  "        tools.extend(page_tools(page))\n",
                  "        try:\n            tools.extend(page_tools(page))\n        except ProtocolViolation:\n"
                  "            pass\n", "3", ("clause 2.4", "tools not a list")),
    LearnerMutant("only each tool's name, description and inputSchema kept", "2",
                  "        tools.extend(page_tools(page))\n",
                  "        tools.extend({k: t[k] for k in (\"name\", \"description\", \"inputSchema\") if k in t}\n"
                  "                     for t in page_tools(page))\n", "3", ("clause 2.3", "(changed)")),
    LearnerMutant("a case-blind [a-z] for the legal characters (the Kelvin sign passes as a K)", "3",
                  "    legal = _ILLEGAL.sub(\"_\", name)\n",
                  "    legal = re.sub(r\"[^a-z0-9_-]\", \"_\", name, flags=re.IGNORECASE)\n", "6",
                  ("clause 3.1", "\u212aelvin")),
    LearnerMutant("the tool's name NFC-normalised before it is named", "3",
                  "    name = f\"mcp__{alias}__{tool_name}\"\n",
                  "    tool_name = __import__(\"unicodedata\").normalize(\"NFC\", tool_name)\n"
                  "    name = f\"mcp__{alias}__{tool_name}\"\n", "6", ("clause 3.3",)),
    LearnerMutant("a failed discovery tried once more", "4",
                  "            try:\n                with anyio.fail_after(self.discovery_timeout):\n"
                  "                    found[spec.alias] = await self.connect(spec)\n",
                  "            try:\n                with anyio.fail_after(self.discovery_timeout):\n"
                  "                    try:\n                        found[spec.alias] = await self.connect(spec)\n"
                  "                    except Exception:\n                        found[spec.alias] = await self.connect(spec)\n",
                  "8", ("clause 4.1", "discovered s2 2 times")),
    LearnerMutant("a timeout's reason written by hand", "4",
                  "            except Exception as exc:  # any failure: record why, keep the rest\n",
                  "            except TimeoutError:\n"
                  "                offline[spec.alias] = f\"timed out after {self.discovery_timeout:g} s\"\n"
                  "            except Exception as exc:  # any failure: record why, keep the rest\n", "8",
                  ("clause 4.2", "a timeout's")),
    # Round 4 of the blind review.
    LearnerMutant("an error reply handed on later, from the task group, not at once", "1",
                  "            slot.reject(McpError.from_reply(message[\"error\"]))\n",
                  "            error = McpError.from_reply(message[\"error\"])\n"
                  "            if self._task_group is not None:\n"
                  "                async def later() -> None:\n                    slot.reject(error)\n"
                  "                self._task_group.start_soon(later)\n"
                  "            else:\n                slot.reject(error)\n", "2",
                  ("clause 1.2", "left the request waiting")),
    LearnerMutant("a tools/call's error reply turned into an isError result", "1",
                  "            slot.reject(McpError.from_reply(message[\"error\"]))\n",
                  "            error = McpError.from_reply(message[\"error\"])\n"
                  "            if slot.method == \"tools/call\":\n"
                  "                slot.resolve({\"content\": [{\"type\": \"text\", \"text\": str(error)}], \"isError\": True})\n"
                  "            else:\n                slot.reject(error)\n", "2",
                  ("clause 1.2", "for a tools/call it resolved")),
    LearnerMutant("a page cut short by a limit of the learner's own, the list so far kept", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        page = None\n        with anyio.move_on_after(5):\n"
                  "            page = await server.request(\"tools/list\", params)\n"
                  "        if page is None:\n            return tools\n", "3", ("clause 2.4", "after 20 s")),
    LearnerMutant("the lists kept by alias in a global, listed once", "2",
                  "    cursor: Optional[str] = None\n",
                  "    kept = globals().setdefault(\"_LISTED\", {})\n"
                  "    if getattr(server, \"alias\", None) in kept:\n"
                  "        return list(kept[server.alias])\n"
                  "    kept[getattr(server, \"alias\", None)] = tools  # filled in below, as the pages come\n"
                  "    cursor: Optional[str] = None\n", "3", ("the first request without a cursor",)),
    LearnerMutant("a list stopped quietly at 1,000 tools", "2",
                  "        tools.extend(page_tools(page))\n",
                  "        tools.extend(page_tools(page))\n        if len(tools) >= 1000:\n            return tools[:1000]\n",
                  "3", ("clause 2.3", "1202 tools")),
    LearnerMutant("names remembered by alias + tool name run together", "3",
                  "    name = f\"mcp__{alias}__{tool_name}\"\n",
                  "    kept = globals().setdefault(\"_NAMED\", {})\n"
                  "    if alias + tool_name in kept:\n        return kept[alias + tool_name]\n"
                  "    name = f\"mcp__{alias}__{tool_name}\"\n"
                  "    kept[alias + tool_name] = name if _ILLEGAL.sub(\"_\", name) == name and len(name) <= MAX_MODEL_NAME \\\n"
                  "        else f\"{_ILLEGAL.sub('_', name)[:MAX_MODEL_NAME - HASH_LENGTH - 1]}_{short_hash(alias, tool_name)}\"\n",
                  "6", ("clause 3.4", "'db2'")),
    LearnerMutant("each server's discovery shielded from cancellation", "4",
                  "            try:\n                with anyio.fail_after(self.discovery_timeout):\n"
                  "                    found[spec.alias] = await self.connect(spec)\n"
                  "            except Exception as exc:  # any failure: record why, keep the rest\n"
                  "                offline[spec.alias] = reason(exc)\n",
                  "            with anyio.CancelScope(shield=True):\n"
                  "                try:\n                    with anyio.fail_after(self.discovery_timeout):\n"
                  "                        found[spec.alias] = await self.connect(spec)\n"
                  "                except Exception as exc:  # any failure: record why, keep the rest\n"
                  "                    offline[spec.alias] = reason(exc)\n", "8",
                  ("clause 4.4", "after it was cancelled")),
    LearnerMutant("a server offline at the last refresh not tried again", "4",
                  "            for spec in self.eager_servers():\n                group.start_soon(connect_one, spec)\n",
                  "            for spec in self.eager_servers():\n                if spec.alias in self.offline:\n"
                  "                    offline[spec.alias] = self.offline[spec.alias]\n                    continue\n"
                  "                group.start_soon(connect_one, spec)\n", "8", ("clause 4.1", "refreshed twice")),
    LearnerMutant("every configured server started, onDemand ones too", "4",
                  "            for spec in self.eager_servers():\n",
                  "            for spec in self.config.servers:\n", "8", ("clause 4.1", "onDemand")),
    # Round 5 of the blind review (issue 44): wrong answers green today, or red with the wrong words.
    LearnerMutant("an error reply's code read with int(): a reply whose error is no object raises", "1",
                  "            slot.reject(McpError.from_reply(message[\"error\"]))\n",
                  "            error = message[\"error\"]\n"
                  "            slot.reject(McpError(int(error[\"code\"]), str(error.get(\"message\", \"\")), error.get(\"data\")))\n",
                  "2", ("clause 1.2", "raised TypeError", "stdio_client.py:", "in on_line")),
    LearnerMutant("a nextCursor that is not a string refused with ProtocolViolation", "2",
                  "        cursor = page.get(\"nextCursor\")\n",
                  "        cursor = page.get(\"nextCursor\")\n        if cursor is not None and not isinstance(cursor, str):\n"
                  "            raise ProtocolViolation(\"a nextCursor that is not a string\")\n", "3",
                  ("clause 2.2", "then raised ProtocolViolation", "discovery.py:")),
    LearnerMutant("asyncio.wait_for as each server's time limit (anyio's loop may be trio's)", "4", LIMITED,
                  "                import asyncio\n"
                  "                found[spec.alias] = await asyncio.wait_for(self.connect(spec), self.discovery_timeout)\n",
                  "8", ("clause 4.6", "called asyncio.wait_for", "aggregator.py:", "in connect_one")),
    LearnerMutant("asyncio.wait_for around each page (anyio's loop may be trio's)", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        import asyncio\n"
                  "        page = await asyncio.wait_for(server.request(\"tools/list\", params), 600)\n", "3",
                  ("clause 2.5", "called asyncio.wait_for", "discovery.py:")),
    LearnerMutant("servers discovered one after another", "4",
                  "        async with anyio.create_task_group() as group:\n            for spec in self.eager_servers():\n"
                  "                group.start_soon(connect_one, spec)\n",
                  "        for spec in self.eager_servers():\n            await connect_one(spec)\n", "8",
                  ("clause 4.5", "took 5 s", "the reference took 2.5 s")),
    LearnerMutant("a limiter of two shared by the servers, each limit counted from its turn", "4",
                  "        async def connect_one(spec: ServerSpec) -> None:\n            try:\n",
                  "        limiter = anyio.CapacityLimiter(2)\n\n"
                  "        async def connect_one(spec: ServerSpec) -> None:\n          async with limiter:\n            try:\n",
                  "8", ("clause 4.5", "took 20 s")),
    LearnerMutant("a code in the range JSON-RPC keeps for server errors taken for the server gone", "1",
                  "            slot.reject(McpError.from_reply(message[\"error\"]))\n",
                  "            err = McpError.from_reply(message[\"error\"])\n"
                  "            slot.reject(ServerGone(str(err)) if isinstance(err.code, int) and -32099 <= err.code <= -32000 else err)\n",
                  "2", ("clause 1.2", "-32000")),
    LearnerMutant("a cancelled page caught and the tools so far returned", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        try:\n            page = await server.request(\"tools/list\", params)\n"
                  "        except anyio.get_cancelled_exc_class():\n            return tools\n",
                  "3", ("clause 2.4", "cancelled by its caller")),
    LearnerMutant("each page's request shielded from its caller's cancel", "2",
                  "        page = await server.request(\"tools/list\", params)\n",
                  "        with anyio.CancelScope(shield=True):\n            page = await server.request(\"tools/list\", params)\n",
                  "3", ("clause 2.4", "cancelled by its caller")),
    LearnerMutant("a server's listing kept in a module cache", "2",
                  "    cursor: Optional[str] = None\n",
                  "    kept = globals().setdefault(\"_LISTED\", [])\n"
                  "    for earlier, listed in kept:\n        if earlier is server:\n            return list(listed)\n"
                  "    kept.append((server, tools))\n    cursor: Optional[str] = None\n",
                  "3", ("clause 2.3", "listed again")),
    # Round 6 (the layered lab): green wrong answers, each now red for its clause.
    LearnerMutant("a long name cut by its UTF-8 length, not its characters", "3",
                  "    keep = MAX_MODEL_NAME - HASH_LENGTH - 1\n",
                  "    keep = MAX_MODEL_NAME - HASH_LENGTH - 1 - (len(name.encode(\"utf-8\", \"surrogatepass\")) - len(name))\n",
                  "6", ("clause 3.1", "é")),
    LearnerMutant("each server held to the longer of the limit and its own timeout", "4", LIMITED,
                  "                with anyio.fail_after(max(self.discovery_timeout, spec.timeout or 0)):\n"
                  "                    found[spec.alias] = await self.connect(spec)\n", "8",
                  ("clause 4.3", "its own timeout 30 s", "past it")),
    *EXTENSION_MUTANTS,
)


def by_region(region: str) -> Tuple[LearnerMutant, ...]:
    return tuple(m for m in CATALOGUE if m.region == region)
