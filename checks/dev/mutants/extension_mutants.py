"""The catalogue's wrong answers to the extensions, E1 to E11 (catalogue.py holds
the nine's and puts them together).

Over 500 lines because it is one table: each entry is a wrong answer a learner
wrote (or a blind reviewer did), the text it replaces and what its red message
must say; split by region it would be eleven small tables read the same way."""

from __future__ import annotations

from typing import Tuple

from checks.dev.mutants.learner import LearnerMutant

CANCELLED = '''    if state.status == "cancelled":
        said = state.message or "no reason given"
'''

RANKED = "    return [entry for _, _, entry in sorted(scored, key=lambda s: (s[0], s[1]))[:max(limit, 0)]]\n"

SCORED = '''        score = 3 * len(wanted & name) + 2 * len(wanted & words(title if isinstance(title, str) else "")) \\
            + len(wanted & words(description if isinstance(description, str) else ""))
'''

RELIST = '''        if self._task_group is not None and alias in self.connections:
            self._task_group.start_soon(self._relist, alias)
'''

WHY = "        why = f\"error {error.code}: {error.message}\" if error else (state.message or \"no reason given\")\n"
FAILED_RETURN = "        return error_result(f\"The task failed on the server ({shown(why, REASON_CHARS)}).\")\n"
FAILED_AND_CANCELLED = FAILED_RETURN + CANCELLED + \
    "        return error_result(f\"The task was cancelled on the server ({shown(said, REASON_CHARS)}).\")\n"

SECRET_SEARCH = """    made.secret = bool(SECRET_NAME.search(name)) or \\
        any(SECRET_WORDS.search(text) for text in (made.title, made.description, fmt))
"""


EXTENSION_MUTANTS: Tuple[LearnerMutant, ...] = (
    # -- E1: consent ------------------------------------------------------------------
    LearnerMutant("a missing readOnlyHint read as true", "E1",
                  '    return trusted and entry.annotations.get("readOnlyHint") is True\n',
                  '    return trusted and (entry.tool.get("annotations") or {}).get("readOnlyHint", True) is True\n',
                  "E1", ("listed without annotations asks first", "readOnlyHint means false")),
    LearnerMutant("a truthy readOnlyHint: any value but false lets a call through", "E1",
                  '    return trusted and entry.annotations.get("readOnlyHint") is True\n',
                  '    return trusted and bool(entry.annotations.get("readOnlyHint"))\n', "E1",
                  ("readOnlyHint 1, a number",)),
    LearnerMutant("the server's word taken whatever the trust", "E1",
                  '    return trusted and entry.annotations.get("readOnlyHint") is True\n',
                  '    return entry.annotations.get("readOnlyHint") is True\n', "E1", ("tickets is untrusted",)),
    # -- E2: list changes ---------------------------------------------------------------
    LearnerMutant("the announcement is ignored (the starter)", "E2", RELIST, "        return\n", "E2",
                  ("the table never changed",)),
    LearnerMutant("a re-list of its own for each announcement, one at a time behind a lock", "E2", RELIST,
                  "        if self._task_group is not None and alias in self.connections:\n"
                  "            lock = self.__dict__.setdefault(\"_relist_lock\", anyio.Lock())\n\n"
                  "            async def relist() -> None:\n"
                  "                async with lock:\n"
                  "                    await self._relist_once(alias)\n"
                  "            self._task_group.start_soon(relist)\n", "E2",
                  ("clause E2.4", "22 announcement(s)")),
    LearnerMutant("every connected server re-listed on any announcement", "E2", RELIST,
                  "        if self._task_group is not None and alias in self.connections:\n"
                  "            for other in list(self.connections):\n"
                  "                self._task_group.start_soon(self._relist, other)\n", "E2",
                  ("clause E2.5", "1 more time(s)")),
    LearnerMutant("the re-list started with asyncio.ensure_future, owned by no task group", "E2", RELIST,
                  "        if alias in self.connections:\n"
                  "            import asyncio\n"
                  "            asyncio.ensure_future(self._relist(alias))\n", "E2",
                  ("clause E2.6", "a task no one owns")),
    # -- E4: many tools ---------------------------------------------------------------------
    LearnerMutant("matches kept in catalogue order, best not first", "E4", RANKED,
                  "    return [entry for _, _, entry in scored[:max(limit, 0)]]\n", "E4",
                  ("search_tools finds export_invoice first",)),
    LearnerMutant("names only: titles and descriptions never searched", "E4", SCORED,
                  "        score = len(wanted & name)\n", "E4", ("for 'alpha beta gamma', lab's tools in this order",)),
    LearnerMutant("a negative limit sliced from the end", "E4", RANKED,
                  "    return [entry for _, _, entry in sorted(scored, key=lambda s: (s[0], s[1]))[:limit]]\n",
                  "E4", ("clause E4.3", "limit -1")),
    LearnerMutant("the name split at '_' and '.' alone, not into words() as the query is", "E4",
                  '        name = words(entry.original_name.replace("_", " ").replace(".", " "))\n',
                  '        name = set(part for part in re.split(r"[_.]", entry.original_name.lower()) if part)\n',
                  "E4", ("clause E4.1", "export-invoice")),
    LearnerMutant("the title read through ToolEntry.title, which falls back to the name", "E4",
                  '2 * len(wanted & words(title if isinstance(title, str) else ""))',
                  "2 * len(wanted & words(entry.title))", "E4", ("clause E4.1", "annotations.title 'Note'")),
    # -- E3: progress -------------------------------------------------------------------
    LearnerMutant("progress taken as a number without a check", "E3",
                  "        if not is_number(progress):\n            return  # not a progress report: nothing to "
                  "show, nothing to extend\n", "", "E3", ("malformed progress report is ignored",)),
    LearnerMutant("progress that does not note its time", "E3",
                  "        self._progress_at[token] = anyio.current_time()\n", "", "E3",
                  ("progressResetsTimeout", "_progress_at")),
    LearnerMutant("the time of a report on the wall clock, not the event loop's", "E3",
                  "        self._progress_at[token] = anyio.current_time()\n",
                  "        self._progress_at[token] = __import__(\"time\").time()\n", "E3",
                  ("clause E3.2", "event loop's clock")),
    LearnerMutant("the time of a report on time.monotonic(), not the event loop's clock", "E3",
                  "        self._progress_at[token] = anyio.current_time()\n",
                  "        self._progress_at[token] = __import__(\"time\").monotonic()\n", "E3",
                  ("clause E3.2", "here not time.monotonic()")),
    # -- E5: structured results ------------------------------------------------------------
    LearnerMutant("structuredContent handed over even from an error", "E5",
                  '    if result.get("isError") or entry is None:\n        return None\n', "", "E5",
                  ("isError result gives the program no data",)),
    LearnerMutant("no check that there is an entry", "E5",
                  '    if result.get("isError") or entry is None:\n',
                  '    if result.get("isError") or entry.output_schema is None:\n', "E5",
                  ("clause E5.2", "raised AttributeError")),
    # -- E6: tasks ----------------------------------------------------------------------------
    LearnerMutant("only completed ends the wait", "E6", '    if state.status == "failed":', "    if False:",
                  "E6", ("status failed ends the wait", "asked tasks/get again")),
    LearnerMutant("cancelled does not end the wait", "E6", CANCELLED, '    if False:\n        said = ""\n', "E6",
                  ("status cancelled ends the wait", "asked tasks/get again")),
    LearnerMutant("input_required ends the wait", "E6", "    return None\n    # <<< extension E6",
                  '    if state.status == "input_required":\n        return error_result("the task needs input")\n'
                  "    return None\n    # <<< extension E6", "E6", ("input_required means the task waits",)),
    LearnerMutant("a made-up result instead of the stored one", "E6", "        return state.result\n",
                  '        return {"content": [{"type": "text", "text": "done"}]}\n', "E6",
                  ("the last answer said 'completed'",)),
    LearnerMutant("a completed task's isError result rewrapped as a failure", "E6",
                  "        return state.result\n    if state.status == \"failed\":",
                  '        if state.result.get("isError"):\n            return error_result("The task failed.")\n'
                  "        return state.result\n    if state.status == \"failed\":", "E6", ("clause E6.1",)),
    LearnerMutant("an error that is not an object read as one: a made-up code, no statusMessage", "E6",
                  "McpError.from_reply(state.error) if isinstance(state.error, dict) else None",
                  "McpError.from_reply(state.error) if state.error is not None else None", "E6",
                  ("clause E6.2", "not naming the statusMessage")),
    # Round 6 of the blind review: the server's words, each cut by shown() to its own limit.
    LearnerMutant("the error's data put ahead of the code and message: a long one pushes them out", "E6",
                  WHY, "        why = (f\"{error.data} \" if error and error.data is not None else \"\") + \\\n"
                       "            (f\"error {error.code}: {error.message}\" if error else (state.message or \"no reason given\"))\n",
                  "E6", ("clause E6.2", "not naming the error's code", "see the log")),
    LearnerMutant("every word cut before shown(): its escapes grow past the cut", "E6", FAILED_AND_CANCELLED,
                  FAILED_AND_CANCELLED.replace("shown(why, REASON_CHARS)", "shown(why[:REASON_CHARS])")
                  .replace("shown(said, REASON_CHARS)", "shown(said[:REASON_CHARS])"),
                  "E6", ("clause E6.2", "the error's message shown past its 300 characters")),
    LearnerMutant("a failed task's statusMessage cut before shown()", "E6", FAILED_RETURN,
                  "        if not error:\n            return error_result(f\"The task failed on the server "
                  "({shown((state.message or 'no reason given')[:REASON_CHARS])}).\")\n" + FAILED_RETURN,
                  "E6", ("clause E6.2", "the statusMessage shown past its 300 characters")),
    LearnerMutant("a cancelled task's statusMessage cut before shown()", "E6",
                  "shown(said, REASON_CHARS)", "shown(said[:REASON_CHARS])",
                  "E6", ("clause E6.3", "the statusMessage shown past its 300 characters")),
    LearnerMutant("the task id cut to ID_CHARS before shown()", "E6", FAILED_RETURN,
                  FAILED_RETURN.replace("The task failed", "Task {shown(state.task_id[:ID_CHARS])} failed"),
                  "E6", ("clause E6.2", "the task id shown past its 40 characters")),
    LearnerMutant("the task id cut at REASON_CHARS, not ID_CHARS", "E6", FAILED_RETURN,
                  FAILED_RETURN.replace("The task failed", "Task {shown(state.task_id, REASON_CHARS)} failed"),
                  "E6", ("clause E6.2", "the task id shown past its 40 characters")),
    # -- E7: elicitation --------------------------------------------------------------------------
    LearnerMutant("every field a text field", "E7", '    kind = schema.get("type")\n',
                  '    return FormField(name, "text", str(name), "", required)\n', "E7",
                  ("priority as a choice of low/normal/high",)),
    LearnerMutant("any type accepted", "E7",
                  '        raise Unsupported(f"field {name!r} is of type {kind!r}, which a form cannot ask for")',
                  '        made.kind = "text"', "E7", ("a form cannot show it (raise Unsupported)",)),
    LearnerMutant("secrets never flagged", "E7", "    made.secret = bool(SECRET_NAME.search(name)) or \\\n",
                  "    made.secret = False and \\\n",
                  "E7", ("secret False (want True)",)),
    LearnerMutant("a missing title left empty, not the property's name", "E7",
                  'str(schema.get("title") or name)', 'str(schema.get("title") or "")', "E7",
                  ("title '' (want 'ratio')",)),
    LearnerMutant("the texts joined before the search: 'api' and 'Key features' make an API key", "E7",
                  "    made.secret = bool(SECRET_NAME.search(name)) or \\\n"
                  "        any(SECRET_WORDS.search(text) for text in (made.title, made.description, fmt))\n",
                  "    made.secret = bool(SECRET_WORDS.search(\" \".join((name, made.title, made.description, made.format))))\n",
                  "E7", ("clause E7.4", "'api'")),
    LearnerMutant("title, description and format searched as one text", "E7", SECRET_SEARCH,
                  "    texts = [t for t in (schema.get(\"title\"), schema.get(\"description\"), fmt) if isinstance(t, str)]\n"
                  "    made.secret = bool(SECRET_NAME.search(name) or SECRET_WORDS.search(\" \".join(texts)))\n",
                  "E7", ("clause E7.4", "'Your API'")),
    LearnerMutant("the description and format searched as one text", "E7", SECRET_SEARCH,
                  "    made.secret = bool(SECRET_NAME.search(name) or SECRET_WORDS.search(made.title)) or \\\n"
                  "        bool(SECRET_WORDS.search(f\"{made.description} {fmt}\"))\n",
                  "E7", ("clause E7.4", "'the private'")),
    LearnerMutant("the format searched only as a text field keeps it: a number's 'pin code' no secret", "E7",
                  "for text in (made.title, made.description, fmt))", "for text in (made.title, made.description, made.format))",
                  "E7", ("clause E7.4", "'format': 'pin code'")),
    LearnerMutant("a missing title written into the server's schema", "E7",
                  "    if kind == \"array\":  # a multiple choice: an array of enum values\n",
                  "    schema.setdefault(\"title\", made.title)\n    if kind == \"array\":  # a multiple choice: an array of enum values\n",
                  "E7", ("clause E7.1", "changed the server's schema")),
    # -- E8: code mode --------------------------------------------------------------------------------
    LearnerMutant("enums typed as plain strings", "E8",
                  "    return f\"Literal[{', '.join(shown_values)}]\" if shown_values else None\n",
                  '    return "str"\n', "E8", ("tune_alerts(mode=...) allows exactly 'quiet', 'loud' and None",
                                          "it allows anything")),
    LearnerMutant("values written without quotes", "E8", "shown_values.append(repr(value))",
                  "shown_values.append(str(value))", "E8",
                  ("Literal[low, normal, high] is not a valid type",)),
    LearnerMutant("repr() of every value, whatever its type", "E8",
                  "        if isinstance(value, bool) or value is None or isinstance(value, (int, str)):\n"
                  "            shown_values.append(repr(value))\n        else:\n            return None\n"
                  "    return f\"Literal[{', '.join(shown_values)}]\" if shown_values else None\n",
                  "        shown_values.append(repr(value))\n    return f\"Literal[{', '.join(shown_values)}]\"\n",
                  "E8", ("tune_alerts",)),
    LearnerMutant("enum strings written in double quotes by hand", "E8", "shown_values.append(repr(value))",
                  "shown_values.append(f\'\"{value}\"\' if isinstance(value, str) else repr(value))", "E8",
                  ("clause E8.1", "not a Python expression")),
    # -- E9: remote servers ---------------------------------------------------------------------------
    LearnerMutant("a blank line never ends the event", "E9", "            return self._dispatch()\n",
                  "            return None\n", "E9", ("no message was read from those streams",)),
    LearnerMutant("the space after the colon kept in the value", "E9",
                  "            value = value[1:]  # one space after the colon is the format's, not the value's\n",
                  "            pass\n", "E9", ("no message was read from those streams",)),
    LearnerMutant("only the last data line kept", "E9", "            self._data.append(value)\n",
                  "            self._data[:] = [value]\n", "E9", ("no message was read from those streams",)),
    LearnerMutant("comments read as data", "E9", "            return None  # a comment: keep-alive, nothing else\n",
                  "            self._data.append(line)\n            return None\n", "E9",
                  ("no message was read from those streams",)),
    LearnerMutant("retry read without checking it is a number", "E9",
                  "        elif name == \"retry\" and value.isascii() and value.isdigit() and len(value) <= RETRY_DIGITS:\n",
                  "        elif name == \"retry\":\n", "E9", ("no message was read from those streams",)),
    LearnerMutant("the id field ignored", "E9", "            self.last_id = value\n", "            pass\n", "E9",
                  ("was never asked to resume it",)),
    LearnerMutant("the retry field ignored", "E9", "            self.retry_ms = int(value)\n", "            pass\n",
                  "E9", ("the retry field was not used",)),
    LearnerMutant("retry checked with str.isdigit, which '²' passes", "E9",
                  "        elif name == \"retry\" and value.isascii() and value.isdigit() and len(value) <= RETRY_DIGITS:\n",
                  "        elif name == \"retry\" and value.isdigit() and len(value) <= RETRY_DIGITS:\n", "E9",
                  ("clause E9.3", "raised ValueError")),
    LearnerMutant("a retry of any length (16 digits kept; int() raises past 4,300)", "E9",
                  "        elif name == \"retry\" and value.isascii() and value.isdigit() and len(value) <= RETRY_DIGITS:\n",
                  "        elif name == \"retry\" and value.isascii() and value.isdigit():\n", "E9", ("clause E9.3", "retry: 1111111111111111")),
    LearnerMutant("the first server that offered a URI wins when two did", "E10",
                  "        if len(holders) == 1:\n", "        if holders:\n", "E10",
                  ("a URI two servers offered is not read until the model names the server",)),
    LearnerMutant("a named server is taken at its word, offered or not", "E10",
                  "            return (server, \"\") if server in holders else (None, not_offered_by(server, uri))\n",
                  "            return server, \"\"\n", "E10", ("clause E10.3",)),
    LearnerMutant("a URI matched without regard to case", "E10",
                  "        holders = self._by_uri.get(uri, [])\n",
                  "        holders = next((h for u, h in self._by_uri.items() if u.lower() == uri.lower()), [])\n",
                  "E10", ("clause E10.1",)),
    LearnerMutant("the model asked before the person said yes", "E11",
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n"
                  "                raise Declined(\"the user declined to send it to the model\")\n"
                  "            system, messages = conversation(ask, new_fence())\n"
                  "            turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n",
                  "            system, messages = conversation(ask, new_fence())\n"
                  "            turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n"
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n"
                  "                raise Declined(\"the user declined to send it to the model\")\n",
                  "E11", ("a request the person declined never reaches the model",)),
    LearnerMutant("any answer but an empty line approves", "E11",
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n",
                  "            if not (await self._read(\"Send this to the model? [y/N]: \")).strip():\n",
                  "E11", ("a request the person declined never reaches the model",)),
    LearnerMutant("the reply sent back without the second question", "E11",
                  "            if not approved(await self._read(f\"Send this reply to server '{alias}'? [y/N]: \")):\n"
                  "                raise Declined(\"the user declined to send the model's reply\")\n", "", "E11",
                  ("the model's reply is shown before the person is asked to send it",)),
    LearnerMutant("the run's budget never taken", "E11", "        self.budget.take()\n", "", "E11",
                  ("clause E11.1", "of the run's budget used")),
    # Round 3 of the blind review: wrong answers written from the guide alone that were green.
    LearnerMutant("a total of 0 read as none", "E3",
                  "        handler(float(progress), float(total) if is_number(total) else None,\n",
                  "        handler(float(progress), float(total) if total and is_number(total) else None,\n", "E3",
                  ("clause E3.1", "'total': 0")),
    LearnerMutant("a failed task's error data handed back as its result", "E6",
                  "    if state.status == \"failed\":\n",
                  "    if state.status == \"failed\" and isinstance(state.error, dict) and \\\n"
                  "            isinstance(state.error.get(\"data\"), dict) and \"content\" in state.error[\"data\"]:\n"
                  "        return state.error[\"data\"]\n    if state.status == \"failed\":\n", "E6",
                  ("clause E6.2", "no isError true")),
    LearnerMutant("the server's words put in the result whole", "E6",
                  "        return error_result(f\"The task failed on the server ({shown(why, REASON_CHARS)}).\")\n",
                  "        return error_result(f\"The task failed on the server ({why}).\")\n", "E6",
                  ("clause E6.2", "past 800 characters")),
    LearnerMutant("SECRET_NAME, where 'pin' alone counts, searched in every text, not only the name", "E7",
                  "        any(SECRET_WORDS.search(text) for text in (made.title, made.description, fmt))\n",
                  "        any(SECRET_NAME.search(text) for text in (made.title, made.description, fmt))\n",
                  "E7", ("clause E7.4", "pin the version")),
    LearnerMutant("a byte order mark dropped from every line", "E9",
                  "        if line == \"\":  # a blank line ends the event\n",
                  "        line = line.lstrip(\"\\ufeff\")\n        if line == \"\":  # a blank line ends the event\n",
                  "E9", ("clause E9.5", "\\ufeffdata")),
    LearnerMutant("a URI compared after NFC normalisation", "E10",
                  "        holders = self._by_uri.get(uri, [])\n",
                  "        nfc = __import__(\"unicodedata\").normalize\n"
                  "        holders = [a for u, got in self._by_uri.items() if nfc(\"NFC\", u) == nfc(\"NFC\", uri) for a in got]\n",
                  "E10", ("clause E10.1", "caf")),
    LearnerMutant("a uri that is not a string made one with str()", "E10",
                  "        if not isinstance(uri, str) or not uri:\n            return None, NO_URI\n",
                  "        if uri is None or uri == \"\":\n            return None, NO_URI\n        uri = str(uri)\n",
                  "E10", ("clause E10.2",)),
    LearnerMutant("the server's words fenced with a fixed marker", "E11",
                  "            system, messages = conversation(ask, new_fence())\n",
                  "            system, messages = conversation(ask, \"server\")\n", "E11",
                  ("clause E11.2", "the marker of the request before")),
    LearnerMutant("the reply shown before it is cut, and sent cut", "E11",
                  "            self.terminal.say(describe_reply(ask, text, self.model.name))\n",
                  "            self.terminal.say(describe_reply(ask, turn.text, self.model.name))\n", "E11",
                  ("clause E11.4", "another reply than the one sent")),
    LearnerMutant("the model's reply sent back whole, never cut to the tokens asked for", "E11",
                  "            text, cut = cut_reply(turn.text, ask.max_tokens)\n",
                  "            text, cut = turn.text, False\n", "E11", ("clause E11.4", "(endTurn)")),
    # Round 4 of the blind review.
    LearnerMutant("the missing readOnlyHint written into the server's annotations", "E1",
                  "    return trusted and entry.annotations.get(\"readOnlyHint\") is True\n",
                  "    entry.tool.setdefault(\"annotations\", {}).setdefault(\"readOnlyHint\", False)\n"
                  "    return trusted and entry.annotations.get(\"readOnlyHint\") is True\n", "E1",
                  ("clause E1.1", "changed the tool's definition")),
    LearnerMutant("a re-list given a second of its own, the change dropped past it", "E2",
                  "            self._task_group.start_soon(self._relist, alias)\n",
                  "            async def bounded() -> None:\n                with anyio.move_on_after(1.0):\n"
                  "                    await self._relist(alias)\n            self._task_group.start_soon(bounded)\n",
                  "E2", ("clause E2.1", "30 s in coming", "it gave up on 1 re-list answer(s) before they came")),
    LearnerMutant("the alias lower-cased before it is looked up", "E2",
                  "        if self._task_group is not None and alias in self.connections:\n",
                  "        alias = alias.lower()\n        if self._task_group is not None and alias in self.connections:\n",
                  "E2", ("clause E2.1", "'Tickets'")),
    LearnerMutant("the description read as its first line, a hundred characters", "E4",
                  "        title, description = entry.tool.get(\"title\"), entry.tool.get(\"description\")\n",
                  "        title, description = entry.tool.get(\"title\"), entry.tool.get(\"description\")\n"
                  "        description = description[:100] if isinstance(description, str) else description\n",
                  "E4", ("clause E4.1", "invoice")),
    LearnerMutant("isError an error only when true, 1, 'yes' or 'true'", "E5",
                  "    if result.get(\"isError\") or entry is None:\n",
                  "    if result.get(\"isError\") in (True, 1, \"yes\", \"true\") or entry is None:\n", "E5",
                  ("clause E5.1", "YES")),
    LearnerMutant("isError a success only when absent or exactly false", "E5",
                  "    if result.get(\"isError\") or entry is None:\n",
                  "    if (\"isError\" in result and result[\"isError\"] is not False) or entry is None:\n", "E5",
                  ("clause E5.3",)),
    LearnerMutant("the stored result marked isError false in place", "E6",
                  "        return state.result\n",
                  "        state.result.setdefault(\"isError\", False)\n        return state.result\n", "E6",
                  ("clause E6.1", "returned {")),
    LearnerMutant("a literal of more than 64 values given up as Any", "E8",
                  "    shown_values = []\n", "    if len(values) > 64:\n        return None\n    shown_values = []\n", "E8",
                  ("clause E8.1", "C000")),
    LearnerMutant("a retry's length judged by its value, leading zeros free", "E9",
                  "        elif name == \"retry\" and value.isascii() and value.isdigit() and len(value) <= RETRY_DIGITS:\n",
                  "        elif name == \"retry\" and value.isascii() and value.isdigit() and int(value) < 10 ** RETRY_DIGITS:\n",
                  "E9", ("clause E9.3",)),
    LearnerMutant("any true server named, looked up in a set", "E10",
                  "        if isinstance(server, str) and server:\n            return (server, \"\") if server in holders else (None, not_offered_by(server, uri))\n",
                  "        if server:\n            return (server, \"\") if server in set(holders) else (None, not_offered_by(str(server), uri))\n",
                  "E10", ("clause E10.3", "True")),
    LearnerMutant("a uri of spaces refused as none", "E10",
                  "        if not isinstance(uri, str) or not uri:\n",
                  "        if not isinstance(uri, str) or not uri.strip():\n", "E10", ("clause E10.1", "' '")),
    LearnerMutant("one fence kept for every request of the sampler", "E11",
                  "            system, messages = conversation(ask, new_fence())\n",
                  "            system, messages = conversation(ask, self.__dict__.setdefault(\"_fence\", new_fence()))\n",
                  "E11", ("clause E11.2", "the marker of the request before")),
    LearnerMutant("fullwidth letters read as a yes (NFKC)", "E11",
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n",
                  "            if not approved(__import__(\"unicodedata\").normalize(\"NFKC\", await self._read(\"Send this to the model? [y/N]: \"))):\n",
                  "E11", ("clause E11.2",)),
    LearnerMutant("the reply shown stripped, sent as it came", "E11",
                  "            self.terminal.say(describe_reply(ask, text, self.model.name))\n",
                  "            self.terminal.say(describe_reply(ask, text.strip(), self.model.name))\n", "E11",
                  ("clause E11.3", "another reply than the one sent")),
    # Round 5 of the blind review (issue 44).
    LearnerMutant("a report's time read from asyncio's loop (anyio's may be trio's)", "E3",
                  "        self._progress_at[token] = anyio.current_time()\n",
                  "        import asyncio\n        self._progress_at[token] = asyncio.get_running_loop().time()\n", "E3",
                  ("clause E3.3", "called asyncio.get_running_loop().time", "stdio_client.py:")),
    LearnerMutant("a re-list only while asyncio's loop runs (anyio's may be trio's)", "E2",
                  "        if self._task_group is not None and alias in self.connections:\n",
                  "        import asyncio\n"
                  "        if self._task_group is not None and alias in self.connections and "
                  "asyncio.get_running_loop().is_running():\n", "E2",
                  ("clause E2.7", "called asyncio.get_running_loop().is_running", "aggregator.py:")),
    LearnerMutant("asyncio.wait_for around the person's answer (anyio's loop may be trio's)", "E11",
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n",
                  "            import asyncio\n"
                  "            if not approved(await asyncio.wait_for(self._read(\"Send this to the model? [y/N]: \"), 600)):\n",
                  "E11", ("clause E11.6", "called asyncio.wait_for", "sampler.py:")),
    LearnerMutant("a progress checked with math.isfinite, which raises on 10**400", "E3",
                  "        if not is_number(progress):\n",
                  "        if not isinstance(progress, (int, float)) or isinstance(progress, bool) or "
                  "not math.isfinite(progress):\n", "E3", ("clause E3.1", "raised OverflowError", "<a 401-digit int>")),
    LearnerMutant("a title or description that is not a string read as text", "E4",
                  SCORED, "        score = 3 * len(wanted & name) + 2 * len(wanted & words(title or \"\")) "
                          "+ len(wanted & words(description or \"\"))\n", "E4",
                  ("clause E4.1", "raised AttributeError", "title 42")),
    LearnerMutant("annotations.title taken for a tool without a title", "E4",
                  "        title, description = entry.tool.get(\"title\"), entry.tool.get(\"description\")\n",
                  "        title, description = entry.tool.get(\"title\") or (entry.tool.get(\"annotations\") or {}).get("
                  "\"title\"), entry.tool.get(\"description\")\n", "E4", ("clause E4.1", "annotations.title 'Note'")),
    LearnerMutant("SECRET_WORDS on all four texts: a field named pin is no secret", "E7",
                  "    made.secret = bool(SECRET_NAME.search(name)) or \\\n",
                  "    made.secret = bool(SECRET_WORDS.search(name)) or \\\n", "E7", ("clause E7.4", "the property 'pin'")),
    LearnerMutant("one pattern on all four texts, a bare 'pin' match skipped: 'Pin code' no secret", "E7",
                  "    made.secret = bool(SECRET_NAME.search(name)) or \\\n"
                  "        any(SECRET_WORDS.search(text) for text in (made.title, made.description, fmt))\n",
                  "    found = [re.search(r\"pin\\b\", t, re.I) or SECRET_WORDS.search(t) for t in (name, made.title, made.description, made.format)]\n"
                  "    made.secret = any(m is not None and m.group(0).lower() != \"pin\" for m in found)\n",
                  "E7", ("clause E7.4",)),
    LearnerMutant("the task id in a failed task's text, as it came", "E6",
                  "        return error_result(f\"The task failed on the server ({shown(why, REASON_CHARS)}).\")\n",
                  "        return error_result(f\"Task {state.task_id} failed on the server ({shown(why, REASON_CHARS)}).\")\n",
                  "E6", ("clause E6.2", "2,018-character task id", "past 800 characters, a raw control character")),
    LearnerMutant("the error's code put in the text as the server sent it", "E6",
                  "        why = f\"error {error.code}: {error.message}\" if error else (state.message or \"no reason given\")\n",
                  "        code = state.error.get(\"code\") if error else None\n"
                  "        why = f\"{error.message}\" if error else (state.message or \"no reason given\")\n"
                  "        if error:\n"
                  "            return error_result(f\"The task failed on the server (error {code}: {shown(why, REASON_CHARS)}).\")\n",
                  "E6", ("clause E6.2", "a raw control character in it")),
    LearnerMutant("a server named for a URI nobody offered told it did not offer it", "E10",
                  "        if not holders:  # whichever server the model named: no other would do either\n"
                  "            return None, offered_by_none(uri)\n"
                  "        if isinstance(server, str) and server:\n"
                  "            return (server, \"\") if server in holders else (None, not_offered_by(server, uri))\n",
                  "        if isinstance(server, str) and server:\n"
                  "            return (server, \"\") if server in holders else (None, not_offered_by(server, uri))\n"
                  "        if not holders:\n            return None, offered_by_none(uri)\n",
                  "E10", ("clause E10.2", "naming the server asked for")),
    LearnerMutant("a refusal that names the URI as it came", "E10", "            return None, offered_by_none(uri)\n",
                  "            return None, f\"No server offered {uri} in this run.\"\n", "E10",
                  ("clause E10.2", "a reason of 3,058 characters, a raw control character in it")),
    LearnerMutant("a title that is not a string kept as it came", "E7", 'str(schema.get("title") or name)',
                  'schema.get("title") or name', "E7", ("clause E7.2", "'title': 42", "raised TypeError")),
    LearnerMutant("stopReason maxTokens whenever the request's maxTokens was capped", "E11",
                  "        return reply_result(text, self.model.name, cut)\n",
                  "        return reply_result(text, self.model.name, cut or ask.max_tokens < ask.asked_tokens)\n", "E11",
                  ("clause E11.4", "'maxTokens': 3000", "(maxTokens)")),
    LearnerMutant("a fence counted from the run's budget: new each request, and predictable", "E11",
                  "            system, messages = conversation(ask, new_fence())\n",
                  "            system, messages = conversation(ask, f\"fence-{self.budget.used}\")\n", "E11",
                  ("clause E11.2", "a fresh sampler gives the same request")),
    LearnerMutant("the model's failure sent back as its reply", "E11",
                  "            turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n"
                  "            text, cut = cut_reply(turn.text, ask.max_tokens)\n",
                  "            try:\n"
                  "                turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n"
                  "                text, cut = cut_reply(turn.text, ask.max_tokens)\n"
                  "            except Exception as exc:\n"
                  "                text, cut = f\"(the model failed: {exc})\", False\n", "E11",
                  ("clause E11.5", "the model failed", "raised ModelApiError")),
    LearnerMutant("the model's failure turned into a decline", "E11",
                  "            turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n",
                  "            try:\n"
                  "                turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n"
                  "            except Exception as exc:\n"
                  "                raise Declined(f\"the model failed: {exc}\")\n", "E11",
                  ("clause E11.5", "then declined", "then raised ModelApiError")),
    LearnerMutant("an empty answer asked again, and again", "E11",
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n",
                  "            answer = await self._read(\"Send this to the model? [y/N]: \")\n"
                  "            while not answer.strip():\n"
                  "                answer = await self._read(\"Send this to the model? [y/N]: \")\n"
                  "            if not approved(answer):\n", "E11", ("clause E11.2", "a loop that never ends")),
    LearnerMutant("structuredContent checked again against the outputSchema", "E5",
                  "        return None\n    return result.get(\"structuredContent\")\n",
                  "        return None\n    validator = entry.output_validator\n"
                  "    if validator is not None and entry.problem(validator, result.get(\"structuredContent\")) is not None:\n"
                  "        return None\n    return result.get(\"structuredContent\")\n", "E5",
                  ("clause E5.3", "broken outputSchema", "raised UnknownType")),
    LearnerMutant("one flag for every server's re-lists: a change of one hidden by another's", "E2", RELIST,
                  "        if self._task_group is None or alias not in self.connections:\n            return\n"
                  "        if self.__dict__.get(\"_busy\"):\n            self.__dict__[\"_again\"] = True\n            return\n"
                  "        self.__dict__[\"_busy\"] = True\n\n"
                  "        async def run() -> None:\n            try:\n                await self._relist_once(alias)\n"
                  "                while self.__dict__.pop(\"_again\", False):\n"
                  "                    await self._relist_once(alias)\n            finally:\n"
                  "                self.__dict__[\"_busy\"] = False\n        self._task_group.start_soon(run)\n", "E2",
                  ("clause E2.2",)),  # the scenario may show it first (then the clause is named beside it)
    # Round 6 (the layered lab): green wrong answers, each now red for its clause.
    LearnerMutant("the caller's catalogue sorted in place", "E4",
                  "    return [entry for _, _, entry in sorted(scored, key=lambda s: (s[0], s[1]))[:max(limit, 0)]]\n",
                  "    kept = {id(e) for _, _, e in scored}\n"
                  "    entries.sort(key=lambda e: next((s for s, _, x in scored if x is e), 0))\n"
                  "    return [e for e in entries if id(e) in kept][:max(limit, 0)]\n", "E4",
                  ("clause E4.2", "changed the list of entries it was given")),
    LearnerMutant("the space after a colon dropped by a replace on the whole line", "E9",
                  "        name, colon, value = line.partition(\":\")\n        if colon and value.startswith(\" \"):\n"
                  "            value = value[1:]  # one space after the colon is the format's, not the value's\n",
                  "        name, colon, value = line.replace(\": \", \":\", 1).partition(\":\")\n", "E9",
                  ("clause E9.2", "x: y")),
    LearnerMutant("a URI looked up again in NFC when the exact one was not offered", "E10",
                  "        holders = self._by_uri.get(uri, [])\n",
                  "        holders = self._by_uri.get(uri, []) or self._by_uri.get(__import__(\"unicodedata\").normalize(\"NFC\", uri), [])\n",
                  "E10", ("clause E10.1", "caf")),
    LearnerMutant("a URI looked up again percent-decoded", "E10",
                  "        holders = self._by_uri.get(uri, [])\n",
                  "        holders = self._by_uri.get(uri, []) or self._by_uri.get(__import__(\"urllib.parse\").parse.unquote(uri), [])\n",
                  "E10", ("clause E10.1", "a%20b")),
    LearnerMutant("the server the model named taken without its spaces", "E10",
                  "        if isinstance(server, str) and server:\n",
                  "        if isinstance(server, str) and server.strip():\n            server = server.strip()\n"
                  "        if isinstance(server, str) and server:\n", "E10", ("clause E10.3", "notes")),
    LearnerMutant("the server's name put raw in a refusal", "E10",
                  "            return (server, \"\") if server in holders else (None, not_offered_by(server, uri))\n",
                  "            return (server, \"\") if server in holders else (None, f\"Server '{server}' did not offer it\")\n",
                  "E10", ("clause E10.3", "a raw control character")),
    LearnerMutant("'ok' taken for a clear yes", "E11",
                  "            if not approved(await self._read(\"Send this to the model? [y/N]: \")):\n",
                  "            if (await self._read(\"Send this to the model? [y/N]: \")).strip().lower() not in (\"y\", \"yes\", \"ok\"):\n",
                  "E11", ("clause E11.2", "'ok'")),
    # Round 6b: kinds a third reviewer found green.
    LearnerMutant("a tool's own _meta claiming trust taken for the config's", "E1",
                  "    return trusted and entry.annotations.get(\"readOnlyHint\") is True\n",
                  "    meta = entry.tool.get(\"_meta\")\n"
                  "    trusted = trusted or (isinstance(meta, dict) and meta.get(\"trusted\") is True)\n"
                  "    return trusted and entry.annotations.get(\"readOnlyHint\") is True\n", "E1",
                  ("clause E1.2", "_meta")),
    LearnerMutant("the model's failure raised again as a new error, its words lost", "E11",
                  "            turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n",
                  "            try:\n                turn = await capped(self.model, ask.max_tokens).next_turn(system, [], messages)\n"
                  "            except Exception as exc:\n                raise type(exc)(\"the model failed\") from None\n",
                  "E11", ("clause E11.5", "another one than the model's")),
    LearnerMutant("an earlier call's data kept on the entry for a result without any", "E5",
                  "    return result.get(\"structuredContent\")\n",
                  "    if \"structuredContent\" in result:\n        entry.__dict__[\"_last_data\"] = result[\"structuredContent\"]\n"
                  "    return entry.__dict__.get(\"_last_data\")\n", "E5", ("clause E5.3", "after a call that returned")),
)
