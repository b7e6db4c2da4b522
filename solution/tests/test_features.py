"""Resources, prompts, logs, sampling and roots end to end, in both eras over stdio,
against a scripted server (feature_servers/library.py) that journals what it read."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import anyio
import pytest

from solution.agent import run_agent
from solution.host.aggregator import Aggregator
from solution.host.config import HostServerSpec
from solution.config import ServerSpec, config_of
from solution.host.audit import AuditLog
from solution.consent import NO, ONCE, Consent, ConsentRequest, always
from solution.model import ModelTurn, ToolCall
from solution.lifecycle.roots import Roots
from solution.sampler import TerminalSampler
from solution.lifecycle.server_log import ServerLog
from solution.commands.terminal import Terminal
from solution.tests.conftest import ROOT

LIBRARY = Path(__file__).resolve().parent / "feature_servers" / "library.py"
pytestmark = pytest.mark.anyio
ERAS = pytest.mark.parametrize("era", ["current", "legacy"])


def library(tmp_path: Path, era: str) -> Tuple[ServerSpec, Path]:
    journal = tmp_path / "library.jsonl"
    args = (str(LIBRARY), "--journal", str(journal), *(["--legacy"] if era == "legacy" else []))
    return ServerSpec("lib", sys.executable, args, {}, str(ROOT)), journal


def read_journal(path: Path) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def text(result: Dict[str, Any]) -> str:
    return "\n".join(str(b.get("text", "")) for b in result["content"])


@ERAS
async def test_every_page_of_resources_and_prompts_and_each_kind_of_read(tmp_path: Path, era: str) -> None:
    spec, _ = library(tmp_path, era)
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        await tools.refresh()
        listed = await tools.listing("lib", "resources/list")
        assert [r["uri"] for r in listed] == ["note://a", "note://b", "note://long"]  # "" was a real cursor
        templates = await tools.listing("lib", "resources/templates/list")
        assert templates[0]["uriTemplate"] == "note://{id}"
        assert [p["name"] for p in await tools.listing("lib", "prompts/list")] == ["summarise", "plain"]
        assert (await tools.read_resource("lib", "note://a"))[0]["text"].startswith("alpha note \x1b[2J")
        blob = await tools.read_resource("lib", "note://b")
        assert blob[0]["mimeType"] == "image/png" and "blob" in blob[0]
        prompt = await tools.get_prompt("lib", "summarise", {"topic": "paging"})
        assert prompt["messages"][0]["content"]["text"] == "Summarise the notes on paging"
        assert await tools.complete_argument("lib", "summarise", "topic", "pag") == ["paging", "pagination"]


@ERAS
async def test_a_subscription_hears_updates_and_a_list_change_is_listed_again(tmp_path: Path, era: str) -> None:
    spec, journal = library(tmp_path, era)
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        await tools.refresh()
        updates: List[Tuple[str, str]] = []
        changes: List[Tuple[str, str]] = []
        heard, relisted = anyio.Event(), anyio.Event()
        tools.on_resource_update = lambda alias, uri: (updates.append((alias, uri)), heard.set())  # type: ignore
        tools.on_list_change = lambda alias, method: (changes.append((alias, method)), relisted.set())  # type: ignore
        await tools.listing("lib", "resources/list")
        await tools.subscribe("lib", "note://a")
        with anyio.fail_after(10):
            await heard.wait()
        assert updates == [("lib", "note://a")]
        result = await tools.call(tools.find("lib", "change").model_name, {})  # type: ignore[union-attr]
        assert not result.get("isError")
        with anyio.fail_after(10):
            await relisted.wait()
        assert ("lib", "resources/list") in changes
        assert [r["uri"] for r in tools.listed[("lib", "resources/list")]][-1] == "note://c"
    sent = [m for m in read_journal(journal) if m.get("method")]
    if era == "legacy":
        assert {"method": "resources/subscribe", "params": {"uri": "note://a"}} in \
            [{"method": m["method"], "params": m.get("params")} for m in sent]
    else:
        filters = [m["params"]["notifications"] for m in sent if m["method"] == "subscriptions/listen"]
        assert filters == [{"resourcesListChanged": True, "promptsListChanged": True},
                           {"resourceSubscriptions": ["note://a"]}]


@ERAS
async def test_log_messages_at_or_above_the_level_reach_the_log_made_safe(tmp_path: Path, era: str) -> None:
    spec, journal = library(tmp_path, era)
    lines: List[str] = []
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        tools.connector.log_level = "warning"
        tools.server_log = ServerLog(lambda key, line: lines.append(line), "warning", requested=True)
        await tools.refresh()
        result = await tools.call(tools.find("lib", "noisy").model_name, {})  # type: ignore[union-attr]
        assert text(result) == "logged"  # the log is not in the result the model reads
    assert lines == ["[lib log warning lib] warning line \\x1b[2J\\x1b]0;owned\\x07\n",
                     "[lib log error lib] error line \\x1b[2J\\x1b]0;owned\\x07\n"]
    sent = read_journal(journal)
    if era == "legacy":
        assert {"level": "warning"} in [m.get("params") for m in sent if m.get("method") == "logging/setLevel"]
    else:
        call = next(m for m in sent if m.get("method") == "tools/call")
        assert call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "warning"


class Model:
    name, api = "scripted", "anthropic"

    async def next_turn(self, system: str, tools: Any, messages: Any) -> ModelTurn:
        return ModelTurn("hello from the model")


def person(*answers: str) -> Terminal:
    typed = list(answers)
    return Terminal(lambda prompt: typed.pop(0) if typed else "", io.StringIO())


@ERAS
async def test_sampling_is_answered_after_two_approvals_and_declined_otherwise(tmp_path: Path, era: str) -> None:
    spec, journal = library(tmp_path, era)
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        tools.sampler = TerminalSampler(Model(), person("y", "y", "n"))
        await tools.refresh()
        name = tools.find("lib", "ask_model").model_name  # type: ignore[union-attr]
        answered = await tools.call(name, {})
        assert "hello from the model" in text(answered) and '"model": "scripted"' in text(answered)
        declined = await tools.call(name, {})
    if era == "legacy":
        assert '"code": -1' in text(declined) and "declined" in text(declined)
    else:
        assert declined["isError"] and "refused" in text(declined)
    asked = next(m for m in read_journal(journal) if m.get("method") == ("initialize" if era == "legacy"
                                                                       else "server/discover"))
    declared = asked["params"]["capabilities"] if era == "legacy" else \
        asked["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"]
    assert declared["sampling"] == {}


@ERAS
async def test_roots_are_given_to_a_server_that_asks(tmp_path: Path, era: str) -> None:
    spec, _ = library(tmp_path, era)
    place = tmp_path / "wörk space"
    place.mkdir()
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        tools.roots = Roots([place])
        await tools.refresh()
        result = await tools.call(tools.find("lib", "where").model_name, {})  # type: ignore[union-attr]
    assert place.as_uri() in text(result) and "%C3%B6rk%20space" in text(result)


class Reader:
    """A model that calls `find`, then reads the link it got, then answers."""

    name, api = "reader", "anthropic"

    def __init__(self, uri: str = "note://a") -> None:
        self.uri = uri
        self.seen: List[Any] = []

    async def next_turn(self, system: str, tools: Any, messages: Any) -> ModelTurn:
        self.seen.append([t["name"] for t in tools])
        turn = len([m for m in messages if m.role == "assistant"])
        if turn == 0:
            return ModelTurn("", [ToolCall("c1", "mcp__lib__find", {})])
        if turn == 1:
            return ModelTurn("", [ToolCall("c2", "read_resource", {"uri": self.uri})])
        return ModelTurn("done")


@pytest.mark.parametrize("uri,read", [("note://a", True), ("note://secret", False)])
async def test_the_model_reads_a_linked_resource_through_read_resource_under_audit(
        tmp_path: Path, uri: str, read: bool) -> None:
    spec, journal = library(tmp_path, "current")
    audit = tmp_path / "audit.jsonl"
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        await tools.refresh()
        tools.audit = AuditLog(audit)
        tools.consent = Consent(always(NO))  # would decline anything it asked about: a read from a trusted server asks not
        model = Reader(uri)
        run = await run_agent("what does the note say?", tools, model)
    assert "read_resource" not in model.seen[0]  # nothing offered yet (find was declined): no tool to pay for
    step = run.steps[1]
    assert (step.alias, step.original_name) == (("lib", "resources/read") if read else ("", ""))
    if read:
        assert "alpha note" in text(step.result) and not step.is_error
    else:
        assert step.is_error and "No server offered" in text(step.result)
    reads = [m for m in read_journal(journal) if m.get("method") == "resources/read"]
    assert len(reads) == (1 if read else 0)  # an unoffered URI never reaches a server
    logged = [json.loads(line) for line in audit.read_text().splitlines()]
    assert logged[-1]["model_name"] == "read_resource" and logged[-1]["decision"] == ("policy" if read else "not sent")


async def test_a_read_from_an_untrusted_server_asks_first_and_a_no_sends_nothing(tmp_path: Path) -> None:
    spec, journal = library(tmp_path, "current")
    asked: List[ConsentRequest] = []

    async def ask(request: ConsentRequest) -> str:
        asked.append(request)
        return NO if request.original_name == "resources/read" else ONCE
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        await tools.refresh()
        tools.consent = Consent(ask, {"lib": False})
        run = await run_agent("what does the note say?", tools, Reader())
    assert [(r.alias, r.original_name, r.arguments) for r in asked][1:] == \
        [("lib", "resources/read", {"uri": "note://a"})]
    assert run.steps[1].is_error and "declined" in text(run.steps[1].result)
    assert not [m for m in read_journal(journal) if m.get("method") == "resources/read"]


SDK_FEATURES = ROOT / "solution" / "tests" / "sdk_servers" / "features_http.py"


@pytest.mark.parametrize("pin", [None, "2025-11-25"], ids=["current era", "legacy era"])
async def test_over_http_an_sdk_servers_resources_prompts_completions_and_logs(serve: Any, pin: Any) -> None:
    url = serve(str(SDK_FEATURES), "PORT")
    lines: List[str] = []
    async with Aggregator(config_of([HostServerSpec("web", "", url=url, protocol_version=pin)]),
                          request_timeout=10) as tools:
        tools.connector.log_level = "info"
        tools.server_log = ServerLog(lambda key, line: lines.append(line), "info", requested=True)
        await tools.refresh()
        assert tools.offline == {}
        assert [r["uri"] for r in await tools.listing("web", "resources/list")] == ["note://a"]
        assert (await tools.read_resource("web", "note://a"))[0]["text"] == "alpha over http \x1b[2J"
        prompt = await tools.get_prompt("web", "summarise", {"topic": "paging"})
        assert "Summarise the notes on paging" in json.dumps(prompt["messages"])
        assert await tools.complete_argument("web", "summarise", "topic", "pag") == ["paging", "pagination"]
        result = await tools.call(tools.find("web", "noisy").model_name, {})  # type: ignore[union-attr]
        assert "logged" in text(result)
    assert lines == ["[web log info] an info line\n", "[web log error] an error line \\x1b]0;owned\\x07\n"]


async def test_over_http_a_handshake_era_sampling_request_is_answered_after_two_approvals(serve: Any) -> None:
    """The request comes on the call's SSE stream and the answer goes back as its own POST.
    (The SDK's 2026-07-28 server has no way to ask without MRTR; the current era's
    sampling is an `inputRequests` round, the same over either transport, shown over stdio above.)"""
    url = serve(str(SDK_FEATURES), "PORT")
    async with Aggregator(config_of([HostServerSpec("web", "", url=url, protocol_version="2025-11-25")]),
                          request_timeout=10) as tools:
        tools.sampler = TerminalSampler(Model(), person("y", "y"))
        await tools.refresh()
        result = await tools.call(tools.find("web", "ask_model").model_name, {})  # type: ignore[union-attr]
    assert "the model said: hello from the model" in text(result), result


async def test_read_resource_joins_the_table_last_once_a_server_offered_something_to_read(tmp_path: Path) -> None:
    spec, _ = library(tmp_path, "current")
    async with Aggregator(config_of([spec]), request_timeout=10) as tools:
        await tools.refresh()
        before = [t["name"] for t in tools.model_tools()]
        await tools.call("mcp__lib__find", {})  # its result links note://a
        after = [t["name"] for t in tools.model_tools()]
    assert "read_resource" not in before and after == [*before, "read_resource"]
