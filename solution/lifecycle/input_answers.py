"""What a server may ask of the client, answered in one place for both eras.

A handshake-era server sends its questions as requests (server_requests.py);
a 2026-07-28 server puts them in a call's `inputRequests` (tool_calls.py).
Either way the same three kinds, each answered only when something stands
behind it (and only then declared, capabilities.py):

- `elicitation/create`: a form for the person (elicitation.py);
- `sampling/createMessage`: the model, after the person approves (sampler.py);
- `roots/list`: the client's roots (roots.py), no person needed.

`Answerers.answer` returns the result, or raises `Declined` (sampling refused
or declined, which a server hears as an error) or `Unanswerable` (a kind
nothing here answers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional

from ..elicitation import Elicitor
from ..errors import reason
from ..jsonrpc import Json
from ..sampler import Declined, Sampler
from .forms import answer
from .roots import Roots

ELICIT, SAMPLE, ROOTS = "elicitation/create", "sampling/createMessage", "roots/list"


class Unanswerable(Exception):
    """A question of a kind this client does not answer (and did not declare)."""


@dataclass
class Answerers:
    elicitor: Optional[Elicitor] = None
    sampler: Optional[Sampler] = None
    roots: Optional[Roots] = None

    @classmethod
    def of(cls, client: Any) -> "Answerers":
        """The answerers a client (or a test's stand-in) carries; none it lacks."""
        return cls(getattr(client, "elicitor", None), getattr(client, "sampler", None),
                   getattr(client, "roots", None))

    def kinds(self) -> List[str]:
        """The methods answered here."""
        found = [(ELICIT, self.elicitor), (SAMPLE, self.sampler), (ROOTS, self.roots)]
        return [method for method, answerer in found if answerer is not None]

    async def answer(self, alias: str, method: Any, params: Any, task_id: Optional[str] = None) -> Json:
        if method == ELICIT and self.elicitor is not None:
            return await answer(self.elicitor, alias, params, task_id)
        if method == SAMPLE and self.sampler is not None:
            try:
                return await self.sampler(alias, params)
            except Declined:
                raise
            except Exception as exc:  # the model's API failed, the terminal went: the server hears why
                raise Declined(f"the model could not answer: {reason(exc)}") from None
        if method == ROOTS and self.roots is not None:
            return self.roots.result()
        raise Unanswerable(str(method))
