"""What a run's prompts cost: the usage each model API reports, kept whole, and priced.

Both APIs nest part of their usage (OpenAI's `prompt_tokens_details.cached_tokens`,
Anthropic's `cache_creation.ephemeral_5m_input_tokens`), so every count is kept
under a dotted key: nothing is dropped and a run's turns sum key by key.

Pricing, in plain input tokens (the providers' published rules):

- Anthropic: `input_tokens` come after the last cache breakpoint and cost 1;
  `cache_creation_input_tokens` were written to the cache and cost 1.25;
  `cache_read_input_tokens` were read from it and cost 0.1.
- OpenAI: `prompt_tokens` is the whole prompt, of which
  `prompt_tokens_details.cached_tokens` came from the cache; those cost half
  (the rate for gpt-4o-mini, the default model); writing costs nothing extra.

Output tokens cost the same whether the prompt was cached or not, so they are
shown beside the bill, not in it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional

ANTHROPIC_WRITE, ANTHROPIC_READ = 1.25, 0.1
OPENAI_READ = 0.5


@dataclass(frozen=True)
class Bill:
    """A run's input tokens by how they were billed, and its output tokens."""

    plain: int  # billed at the full rate
    writes: int  # written to the cache
    reads: int  # read from the cache
    output: int
    write_rate: float
    read_rate: float

    @property
    def uncached(self) -> int:
        """The whole prompt at the full rate: what the run would cost with no cache."""
        return self.plain + self.writes + self.reads

    @property
    def billed(self) -> float:
        return self.plain + self.write_rate * self.writes + self.read_rate * self.reads

    def line(self) -> str:
        return (f"input {self.uncached:,} = {self.plain:,} plain + {self.writes:,} cache writes + "
                f"{self.reads:,} cache reads; output {self.output:,}; billed as "
                f"{round(self.billed):,} plain tokens of {self.uncached:,}")

    def as_json(self) -> Dict[str, Any]:
        return {"input": self.uncached, "plain": self.plain, "cache_writes": self.writes,
                "cache_reads": self.reads, "output": self.output, "billed": round(self.billed, 1),
                "uncached": self.uncached, "write_rate": self.write_rate, "read_rate": self.read_rate}


def bill_of(usage: Dict[str, int]) -> Optional[Bill]:
    """The bill for a run's summed usage, told apart by the API's own keys; None
    when neither API's keys are there (the mock, an API that reports nothing)."""
    if "input_tokens" in usage:  # Anthropic: the three parts add up to the prompt
        return Bill(usage["input_tokens"], usage.get("cache_creation_input_tokens", 0),
                    usage.get("cache_read_input_tokens", 0), usage.get("output_tokens", 0),
                    ANTHROPIC_WRITE, ANTHROPIC_READ)
    if "prompt_tokens" in usage:  # OpenAI: the cached part is inside prompt_tokens
        reads = usage.get("prompt_tokens_details.cached_tokens", 0)
        return Bill(usage["prompt_tokens"] - reads, 0, reads, usage.get("completion_tokens", 0),
                    1.0, OPENAI_READ)
    return None
