"""Which model answers: chosen from the environment, with a note saying why.

    MOCK=1                       the deterministic mock (always wins)
    ANTHROPIC_API_KEY            Anthropic Messages API
      ANTHROPIC_MODEL, ANTHROPIC_BASE_URL    optional overrides
    OPENAI_BASE_URL or OPENAI_API_KEY        any OpenAI-compatible API
      OPENAI_MODEL               the model name (local servers need one)
    nothing                      the mock, and the note says so
"""

from __future__ import annotations

import os
from typing import Mapping, Optional, Tuple

from . import anthropic_model, openai_model
from .mock_model import MockModel
from .model import Model


def choose_model(env: Optional[Mapping[str, str]] = None) -> Tuple[Model, str]:
    env = os.environ if env is None else env
    if env.get("MOCK", "") not in ("", "0"):
        return MockModel(), "model: mock (MOCK=1)"
    if env.get("ANTHROPIC_API_KEY"):
        chosen = anthropic_model.AnthropicModel(
            env["ANTHROPIC_API_KEY"], env.get("ANTHROPIC_MODEL") or anthropic_model.DEFAULT_MODEL,
            env.get("ANTHROPIC_BASE_URL") or anthropic_model.DEFAULT_BASE_URL)
        return chosen, f"model: {chosen.model} (Anthropic Messages API, from ANTHROPIC_API_KEY)"
    if env.get("OPENAI_BASE_URL") or env.get("OPENAI_API_KEY"):
        base = env.get("OPENAI_BASE_URL") or openai_model.DEFAULT_BASE_URL
        found = openai_model.OpenAIModel(env.get("OPENAI_MODEL") or openai_model.DEFAULT_MODEL, base,
                                         env.get("OPENAI_API_KEY") or None)
        return found, f"model: {found.model} (OpenAI-compatible API at {base})"
    return MockModel(), ("model: mock (no model API is configured: set ANTHROPIC_API_KEY or "
                         "OPENAI_BASE_URL/OPENAI_API_KEY for a real one)")
