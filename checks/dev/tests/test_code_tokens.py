"""The code-mode token count (bench row 7) compares like with like: the same
calls reach the servers and the same answer comes back either way."""

from __future__ import annotations

import anyio

from checks.dev.code_tokens import demo_tokens


def test_code_mode_sends_the_model_less_than_the_same_calls_made_directly() -> None:
    found = anyio.run(demo_tokens)
    assert found["calls"] == 5 and found["direct_errors"] == 0 and found["same_answer"]
    assert (found["code_mode_turns"], found["direct_turns"]) == (2, 4)  # script + answer; search, reads, add, answer
    assert found["code_mode"] < found["direct"], found
