"""The bill: usage kept whole (nested fields too), priced by each API's caching rules,
and shown in `ask`'s last line and in `--json` on both APIs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Dict, List

import pytest

from solution.commands.bill import bill_of
from solution.model_apis import anthropic_turn, flat_usage, openai_turn
from solution.tests.conftest import ROOT
from solution.tests.fake_api import FakeApi, Reply, ok

OPENAI_USAGE = {"prompt_tokens": 38423, "completion_tokens": 140, "total_tokens": 38563,
                "prompt_tokens_details": {"cached_tokens": 32256, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0}}
ANTHROPIC_USAGE = {"input_tokens": 600, "output_tokens": 90, "cache_creation_input_tokens": 4800,
                   "cache_read_input_tokens": 24000, "service_tier": "standard",
                   "cache_creation": {"ephemeral_5m_input_tokens": 4800, "ephemeral_1h_input_tokens": 0}}


def test_nested_usage_fields_are_kept_under_dotted_keys() -> None:
    assert flat_usage(OPENAI_USAGE) == {"prompt_tokens": 38423, "completion_tokens": 140, "total_tokens": 38563,
                                        "prompt_tokens_details.cached_tokens": 32256,
                                        "prompt_tokens_details.audio_tokens": 0,
                                        "completion_tokens_details.reasoning_tokens": 0}
    assert flat_usage({"a": True, "b": "x", "c": 1.5, "d": [1]}) == {}  # no count among them
    turn = openai_turn({"choices": [{"message": {"content": "hi"}}], "usage": OPENAI_USAGE})
    assert turn.usage["prompt_tokens_details.cached_tokens"] == 32256
    turn = anthropic_turn({"content": [], "usage": ANTHROPIC_USAGE})
    assert turn.usage["cache_creation.ephemeral_5m_input_tokens"] == 4800 and "service_tier" not in turn.usage


def test_each_api_is_billed_by_its_own_rules() -> None:
    anthropic = bill_of(flat_usage(ANTHROPIC_USAGE))
    assert anthropic is not None and anthropic.uncached == 600 + 4800 + 24000
    assert anthropic.billed == pytest.approx(600 + 1.25 * 4800 + 0.1 * 24000)
    openai = bill_of(flat_usage(OPENAI_USAGE))
    assert openai is not None and (openai.plain, openai.writes, openai.reads) == (38423 - 32256, 0, 32256)
    assert openai.billed == pytest.approx(38423 - 32256 + 0.5 * 32256) and openai.uncached == 38423
    assert openai.line() == ("input 38,423 = 6,167 plain + 0 cache writes + 32,256 cache reads; output 140; "
                             "billed as 22,295 plain tokens of 38,423")
    assert bill_of({}) is None and bill_of({"tokens": 3}) is None


def answers_at_once(api: str) -> Any:
    """A fake model that answers without a tool, reporting cached tokens as its API does."""
    def reply(body: Dict[str, Any]) -> Reply:
        if api == "openai":
            return ok({"choices": [{"message": {"role": "assistant", "content": "done"}}], "usage": OPENAI_USAGE})
        return ok({"content": [{"type": "text", "text": "done"}], "usage": ANTHROPIC_USAGE})
    return reply


def env_for(api: str, url: str) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "MOCK"))}
    if api == "openai":
        return {**env, "OPENAI_BASE_URL": url + "/v1", "OPENAI_MODEL": "fake-model"}
    return {**env, "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_the_summary_line_and_json_show_cached_tokens(api: str) -> None:
    outputs: List[str] = []
    with FakeApi(answers_at_once(api)) as fake:
        for extra in ([], ["--json"]):
            done = subprocess.run([sys.executable, "-m", "solution", "ask", "hello", *extra], capture_output=True,
                                  text=True, timeout=60, cwd=ROOT, env=env_for(api, fake.url))
            assert done.returncode == 0, done.stderr
            outputs.append(done.stdout)
    last = outputs[0].strip().splitlines()[-1]
    found = json.loads(outputs[1])
    if api == "openai":
        assert "32,256 cache reads" in last and "billed as 22,295 plain tokens of 38,423" in last
        assert found["usage"]["prompt_tokens_details.cached_tokens"] == 32256
        assert (found["bill"]["cache_reads"], found["bill"]["billed"]) == (32256, 22295.0)
    else:
        assert "4,800 cache writes + 24,000 cache reads" in last and "of 29,400" in last
        assert found["usage"]["cache_read_input_tokens"] == 24000
        assert (found["bill"]["cache_writes"], found["bill"]["uncached"]) == (4800, 29400)
