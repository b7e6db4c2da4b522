"""A model API's prompt cache, billed by the provider's published rules, for a loopback stand-in.

Tokens are estimated as characters / 4 of each piece's JSON. Both caches live as
long as the stand-in (a run is far shorter than the five minutes an entry lasts).

Anthropic (`AnthropicCache`): the prompt is a row of blocks, tools first, then the
system blocks, then each message's content blocks. A block carrying
`cache_control` is a breakpoint (at most 4). The prefix ending at a breakpoint is
written to the cache when it is at least 1,024 tokens long; a request reads the
longest prefix already written that ends at one of its breakpoints or up to 20
blocks before one. Reported as `cache_read_input_tokens` (billed 0.1),
`cache_creation_input_tokens` (from the read up to the last breakpoint, billed 1.25)
and `input_tokens` (the rest, after the last breakpoint). `cache_control` itself is
no part of what is matched, and a string `content` is one text block.

OpenAI (`OpenAICache`): automatic. The prompt is the tool table, then the
messages; the longest prefix it shares with an earlier prompt is read from the
cache once it is at least 1,024 tokens, in steps of 128, and reported as
`usage.prompt_tokens_details.cached_tokens`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Set

Json = Dict[str, Any]
MIN_CACHED = 1024
LOOKBACK = 20  # blocks before a breakpoint that Anthropic also checks for a hit
MAX_BREAKPOINTS = 4
OPENAI_STEP = 128


def tokens(text: str) -> int:
    return len(text) // 4


def text_of(piece: Any) -> str:
    return json.dumps(piece, sort_keys=True, ensure_ascii=False)


class TooManyBreakpoints(ValueError):
    """The request marks more than 4 blocks: Anthropic refuses it (HTTP 400)."""


@dataclass(frozen=True)
class Block:
    text: str  # what is matched: the block without its cache_control
    breakpoint: bool


def unmarked(block: Json) -> Json:
    return {k: v for k, v in block.items() if k != "cache_control"}


def anthropic_blocks(body: Json) -> List[Block]:
    """A Messages API request as the row of blocks its cache sees, in order."""
    row = [Block("tool:" + text_of(unmarked(t)), "cache_control" in t) for t in body.get("tools") or []]
    system = body.get("system") or []
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system:
        row.append(Block("system:" + text_of(unmarked(block)), "cache_control" in block))
    for message in body.get("messages") or []:
        content = message["content"]
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content:
            row.append(Block(f"{message['role']}:" + text_of(unmarked(block)), "cache_control" in block))
    return row


class AnthropicCache:
    def __init__(self) -> None:
        self.written: Set[str] = set()  # digests of the prefixes in the cache

    def usage(self, body: Json) -> Json:
        row = anthropic_blocks(body)
        marks = [i for i, block in enumerate(row) if block.breakpoint]
        if len(marks) > MAX_BREAKPOINTS:
            raise TooManyBreakpoints(f"A maximum of {MAX_BREAKPOINTS} blocks with cache_control may be "
                                     f"provided. Found {len(marks)}.")
        digests, ends, running, total = [], [], hashlib.sha256(), 0
        for block in row:
            running.update(block.text.encode() + b"\x00")
            digests.append(running.hexdigest())
            total += tokens(block.text)
            ends.append(total)  # tokens up to and including this block
        read_at = max((hit for mark in marks for hit in self._hit(digests, mark)), default=-1)
        cacheable = [mark for mark in marks if ends[mark] >= MIN_CACHED]
        read = ends[read_at] if read_at >= 0 else 0
        written = ends[cacheable[-1]] - read if cacheable and cacheable[-1] > read_at else 0
        self.written.update(digests[mark] for mark in cacheable)
        return {"input_tokens": total - read - written, "cache_creation_input_tokens": written,
                "cache_read_input_tokens": read}

    def _hit(self, digests: List[str], mark: int) -> List[int]:
        """The latest block at or up to 20 before `mark` whose prefix is cached ([] if none)."""
        for index in range(mark, max(-1, mark - LOOKBACK - 1), -1):
            if digests[index] in self.written:
                return [index]
        return []


def openai_prompt(body: Json) -> str:
    """A chat completions request as one text, tools first: what its prefix cache compares."""
    return text_of(body.get("tools") or []) + "".join(text_of(m) for m in body.get("messages") or [])


class OpenAICache:
    def __init__(self) -> None:
        self.prompts: List[str] = []

    def usage(self, body: Json) -> Json:
        prompt = openai_prompt(body)
        shared = max((len(os.path.commonprefix([prompt, earlier])) for earlier in self.prompts), default=0)
        self.prompts.append(prompt)
        seen = tokens(prompt[:shared])
        cached = 0 if seen < MIN_CACHED else MIN_CACHED + (seen - MIN_CACHED) // OPENAI_STEP * OPENAI_STEP
        return {"prompt_tokens": tokens(prompt), "prompt_tokens_details": {"cached_tokens": cached}}
