"""Resources, templates, prompts and completion as pure answers (content.py)."""

from __future__ import annotations

from typing import Dict, List

import pytest

from servers.content import Content, Prompt, Resource, Template, completed
from servers.rpc import RpcError


def library() -> Content:
    text = Resource("demo://a", "a", "text/plain", lambda: {"text": "alpha"}, title="A")
    blob = Resource("demo://b.bin", "b.bin", "application/octet-stream", lambda: {"blob": "AAE="})

    def render(arguments: Dict[str, str]) -> List[Dict[str, object]]:
        return [{"role": "user", "content": {"type": "text", "text": f"about {arguments['topic']}"}}]

    family = Template("demo://item/{id}/data", "item", "text/plain", completions={"id": lambda: ["7", "70", "8"]},
                      read=lambda v: {"text": f"item {v['id']}"} if v["id"].isdigit() else None)
    prompt = Prompt("explain", "Explain a topic.", render,
                    arguments=[{"name": "topic", "required": True}, {"name": "tone"}],
                    completions={"topic": lambda: ["Paging", "parsing", "naming"]})
    return Content(lambda: [text, blob], [family], [prompt])


def test_a_template_matches_one_segment_per_variable() -> None:
    family = Template("note://{id}", "note", "text/markdown")
    assert family.match("note://n-1") == {"id": "n-1"}
    assert family.match("note://n-1/attachments/x.png") is None
    assert family.match("other://n-1") is None
    assert Template("a.b://{x}/{y}", "t", "text/plain").match("a.b://1/2") == {"x": "1", "y": "2"}
    assert Template("a.b://{x}", "t", "text/plain").match("aXb://1") is None  # the dot is literal


def test_a_read_gives_text_or_blob_with_uri_and_type() -> None:
    content = library()
    assert content.read({"uri": "demo://a"}, legacy=False) == \
        {"contents": [{"uri": "demo://a", "mimeType": "text/plain", "text": "alpha"}]}
    assert content.read({"uri": "demo://b.bin"}, legacy=False)["contents"][0]["blob"] == "AAE="
    assert content.read({"uri": "demo://item/42/data"}, legacy=False)["contents"] == \
        [{"uri": "demo://item/42/data", "mimeType": "text/plain", "text": "item 42"}]


@pytest.mark.parametrize("legacy, code", [(False, -32602), (True, -32002)])
def test_an_unknown_uri_is_each_eras_not_found(legacy: bool, code: int) -> None:
    for uri in ("demo://nothing", "demo://item/x/data"):  # the template's read declines a non-number
        with pytest.raises(RpcError) as caught:
            library().read({"uri": uri}, legacy=legacy)
        assert caught.value.code == code and caught.value.data == {"uri": uri}
    with pytest.raises(RpcError) as caught:
        library().read({}, legacy=legacy)
    assert caught.value.code == -32602


def test_a_uri_is_watchable_when_listed_or_in_a_templates_family() -> None:
    content = library()
    assert content.accepts("demo://a") and content.accepts("demo://item/9/data")
    assert not content.accepts("demo://c") and not content.accepts(7)


def test_a_prompt_renders_with_its_arguments_and_refuses_missing_or_unknown_ones() -> None:
    content = library()
    got = content.get_prompt({"name": "explain", "arguments": {"topic": "cursors"}})
    assert got["messages"][0]["content"]["text"] == "about cursors" and got["description"] == "Explain a topic."
    for params in ({"name": "explain"}, {"name": "explain", "arguments": {"topic": "x", "mood": "y"}},
                   {"name": "explain", "arguments": {"topic": 3}}, {"name": "nope"}):
        with pytest.raises(RpcError) as caught:
            content.get_prompt(params)
        assert caught.value.code == -32602, params


def test_completion_offers_what_starts_with_the_value_for_prompts_and_templates() -> None:
    content = library()
    prompt = {"ref": {"type": "ref/prompt", "name": "explain"}, "argument": {"name": "topic", "value": "pa"}}
    assert content.complete(prompt) == {"completion": {"values": ["Paging", "parsing"], "total": 2, "hasMore": False}}
    template = {"ref": {"type": "ref/resource", "uri": "demo://item/{id}/data"}, "argument": {"name": "id", "value": "7"}}
    assert content.complete(template)["completion"]["values"] == ["7", "70"]


@pytest.mark.parametrize("params", [
    {"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "topic", "value": ""}},
    {"ref": {"type": "ref/prompt", "name": "explain"}, "argument": {"name": "tone", "value": ""}},
    {"ref": {"type": "ref/resource", "uri": "demo://{other}"}, "argument": {"name": "id", "value": ""}},
    {"ref": {"type": "ref/tool", "name": "x"}, "argument": {"name": "id", "value": ""}},
    {"ref": {"type": "ref/prompt", "name": "explain"}, "argument": {"name": "topic"}},
])
def test_completion_of_what_does_not_exist_is_invalid_params(params: Dict[str, object]) -> None:
    with pytest.raises(RpcError) as caught:
        library().complete(params)
    assert caught.value.code == -32602


def test_completion_stops_at_a_hundred_values_and_says_there_are_more() -> None:
    done = completed([f"w{i:03}" for i in range(150)], "w")["completion"]
    assert len(done["values"]) == 100 and done["total"] == 150 and done["hasMore"] is True
