"""E10 and E11: which server a linked URI is read from (`Offers.resolve`), and a
sampling request answered with the person's approval (`TerminalSampler.__call__`).

E10 is a function of what servers offered and what the model asked; its
observation is which server was chosen, or that the read was refused (never
the refusal's wording). E11 is a conversation at a scripted terminal with a
scripted model; its observation is the order of what was shown, asked and
sent to the model, and how the request ended.
"""

from __future__ import annotations

import io
import re
from typing import Any, Dict, List, Tuple

from checks.contracts.clause import DETAIL, ON_TRIO, TRIO_SOURCE, Clause, Contract, Told, raised
from checks.contracts.wire import json_values
from checks.target import Target

# -- E10: which server a URI is read from ----------------------------------------


def resolved(package: Target, case: Dict[str, Any]) -> Told:
    offers = package.module("resource_links").Offers()
    for alias, uris in case["offers"]:
        offers.offer(alias, list(uris))
    if "asked before" in case:  # the model read it once already, naming a server: each ask stands alone
        offers.resolve(*case["asked before"])
    before = {uri: list(holders) for uri, holders in offers._by_uri.items()}
    answer = offers.resolve(case["uri"], case.get("server"))
    if {uri: list(holders) for uri, holders in offers._by_uri.items()} != before:
        return Told("changed what was offered in the run (a URI asked about is not an offer)")
    if not (isinstance(answer, tuple) and len(answer) == 2):
        return Told(f"returned {answer!r:.60}, not (alias, why)")
    alias, why = answer
    if alias is None:
        if not (isinstance(why, str) and why):
            return Told("refused without saying why")
        # The reason reaches the model: a URI (the server's word, or the model's) cut and shown in it.
        safe = "" if len(why) <= WHY_BOUND and not CONTROL.search(why) else \
            (f" (a reason of {len(why):,} characters" if len(why) > WHY_BOUND else " (a reason") + \
            (", a raw control character in it)" if CONTROL.search(why) else ")")
        # Several offered it: the model can only choose if the refusal names them all.
        holders = [a for a, uris in case["offers"] if a and case["uri"] in uris] if isinstance(case["uri"], str) else []
        holders = list(dict.fromkeys(holders))
        if len(holders) > 1:
            named = sum(1 for a in holders if a in why)
            return Told(f"refused, naming {named} of the {len(holders)} servers that offered it{safe}")
        asked = case.get("server")
        if not holders and isinstance(asked, str) and asked and asked in why.replace(str(case["uri"]), ""):
            # Nobody offered it: "server X did not offer it" would send the model to try another.
            return Told(f"refused, naming the server asked for, as if another might have offered it{safe}")
        return Told(f"refused, saying why{safe}")
    return Told(f"read it from {alias!r}" if isinstance(alias, str) else f"returned the alias {alias!r:.40}")


WHY_BOUND = 600  # the most a refusal's words run to when the URI and the names in it are cut (shown())
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# A URI as a server may link it, or a model ask for it: long, and holding what a terminal obeys.
LONG_URI = "note://n-1/" + "\x1b]52;c;cGF3bmVk\x07" + "x" * 3000


def show_offers(case: Dict[str, Any]) -> str:
    offered = "; ".join(f"{alias} offered {list(uris)!r:.80}" for alias, uris in case["offers"]) or "nothing offered"
    named = f" from server {case['server']!r:.80}" if "server" in case else ""
    before = (f", after it read it from {case['asked before'][1]!r}" if "asked before" in case else "")
    return f"{offered}, and the model asking for {case['uri']!r:.80}{named}{before}"


# A server's name as a model may write it: long, and holding what a terminal obeys.
LONG_NAME = "\x1b[2J\x1b]0;pwned\x07" + "s" * 3000

URIS = ["note://n-1", "note://n-2", "Note://n-1", "note://n-1/", "note://n%2D1", "note://é", "", " ",
        "file:///etc/passwd", "note://n-1\n", LONG_URI, "note://\x1b[2J"]


def offer_cases(st: Any, named: bool) -> Any:
    # Few URIs and aliases, so that what the model asks for was often offered, by one or by two.
    common = st.sampled_from(["note://n-1", "note://n-1", "note://n-2"])
    uri = st.one_of(common, common, st.sampled_from(URIS))
    alias = st.sampled_from(["notes", "archive", "notes", "archive", "tickets", "Notes", ""])
    offers = st.lists(st.tuples(alias, st.lists(uri, min_size=1, max_size=3)), max_size=3)
    server = st.one_of(alias, alias, st.sampled_from([None, 0, "notes ", " notes\n", "NOTES", LONG_NAME]))
    asked = st.one_of(uri, uri, uri, json_values(st))
    if named:
        return st.fixed_dictionaries({"offers": offers, "uri": asked, "server": server})
    return st.fixed_dictionaries({"offers": offers, "uri": asked})


ONE = [("notes", ["note://n-1"])]
BOTH = [("notes", ["note://n-1"]), ("archive", ["note://n-1"])]

E10 = Contract("E10", "Offers.resolve", (
    Clause("E10.1", "must read a URI from the one server that offered it in this run (linked in a result or "
                    "listed), exactly as offered: another case, a trailing '/', a percent-escape, a newline "
                    "or another Unicode form of the same letters is another URI, refused with a reason; asking "
                    "about a URI must not change what was offered",
           "lab rule (MCP leaves to the client where a resource link is read from)", resolved, show_offers,
           edges=({"offers": ONE, "uri": "note://n-1"}, {"offers": ONE, "uri": "Note://n-1"},
                  {"offers": ONE, "uri": "note://n-1/"}, {"offers": ONE, "uri": "note://n-1\n"},
                  {"offers": [("notes", ["note://n-1", "note://n-1"])], "uri": "note://n-1"},
                  {"offers": [("notes", [" "])], "uri": " "},
                  {"offers": [("notes", ["note://cafe\u0301"])], "uri": "note://caf\u00e9"},
                  {"offers": [("notes", ["note://caf\u00e9"])], "uri": "note://cafe\u0301"},
                  {"offers": [("notes", ["note://a b"])], "uri": "note://a%20b"},
                  {"offers": [("notes", ["note://a%20b"])], "uri": "note://a b"}),
           inputs=lambda st: offer_cases(st, False), count=120),
    Clause("E10.2", "must refuse, with a reason and without naming a server, a URI no server offered (whatever "
                    "server the model named: no other has it either), and a uri that is not a non-empty string "
                    "(null, 0, a list, \"\", even one a listing held), never raising; a reason reaches the model, "
                    "so a URI or name in it is cut and its control characters shown (the module's helpers do it)",
           "lab rule: a link is the server's word; anything else could point the model anywhere", resolved,
           show_offers,
           edges=({"offers": [], "uri": "note://n-1"}, {"offers": ONE, "uri": None}, {"offers": ONE, "uri": ""},
                  {"offers": [("notes", [""])], "uri": ""}, {"offers": ONE, "uri": "file:///etc/passwd"},
                  {"offers": ONE, "uri": 0}, {"offers": ONE, "uri": ["note://n-1"]},
                  {"offers": [("notes", ["5"])], "uri": 5},
                  {"offers": [("notes", ["['note://n-1']"])], "uri": ["note://n-1"]},
                  {"offers": ONE, "uri": LONG_URI}, {"offers": ONE, "uri": "note://n-2", "server": "archive"},
                  {"offers": BOTH, "uri": "note://n-2", "server": "notes"},
                  {"offers": [], "uri": "note://n-1", "server": LONG_NAME}),
           inputs=lambda st: offer_cases(st, False), count=100),
    Clause("E10.3", "must refuse a URI that several servers offered until the model names one of them, then "
                    "read it from that one; must refuse a named server that did not offer it (names are exact: "
                    "'NOTES' is not 'notes', nor ' notes'), even when only one other server did; a server that is not a "
                    "non-empty string (null, \"\", 0, true, a list) names none; each ask stands alone (a server "
                    "named before is not named now)",
           "lab rule: URIs are not unique across servers, so a link from one is never read from another",
           resolved, show_offers,
           edges=({"offers": BOTH, "uri": "note://n-1"}, {"offers": BOTH, "uri": "note://n-1", "server": "archive"},
                  {"offers": ONE, "uri": "note://n-1", "server": "archive"},
                  {"offers": ONE, "uri": "note://n-1", "server": "NOTES"},
                  {"offers": ONE, "uri": "note://n-1", "server": " notes\n"},
                  {"offers": ONE, "uri": "note://n-1", "server": "notes "},
                  {"offers": ONE, "uri": "note://n-1", "server": LONG_NAME},
                  {"offers": ONE, "uri": "note://n-1", "server": None},
                  {"offers": ONE, "uri": "note://n-1", "server": ""},
                  {"offers": ONE, "uri": "note://n-1", "server": 0},
                  {"offers": ONE, "uri": "note://n-1", "server": True},
                  {"offers": ONE, "uri": "note://n-1", "server": ["notes"]},
                  {"offers": BOTH, "uri": "note://n-1", "asked before": ["note://n-1", "archive"]},
                  {"offers": [("notes", [LONG_URI]), ("archive", [LONG_URI])], "uri": LONG_URI}),
           inputs=lambda st: offer_cases(st, True), count=150),
))


# -- E11: sampling with the person's approval -------------------------------------


MODEL_FAILS = "<the model fails>"  # a reply that stands for the model's API failing instead
ASKS = 12  # questions for one request past which the person is not asked again: a loop that never ends


class Looped(BaseException):
    """The person was asked more than ASKS times for one request (not an Exception: a
    learner's `except Exception` must not swallow the judge's way out of the loop)."""


class Scripted:
    """A terminal, a model and a budget that write down, in order, what happened."""

    name = "scripted"

    def __init__(self, package: Target, answers: List[Any], reply: str, budget: int) -> None:
        self.package = package
        self.events: List[str] = []
        self.answers = list(answers)
        self.reply = reply
        # The model's failures, as raised, to tell from a new one (a list: capped() copies the model).
        self.failures: List[BaseException] = []
        events = self.events

        world = self

        class Out(io.StringIO):
            def write(self, text: str) -> int:
                # Told apart by what describe_ask and describe_reply always say.
                events.append("showed the request" if "asks to use your model" in text else
                              "showed the reply" if "answered;" in text else "said something")
                if "answered;" in text:
                    world.shown_reply = text
                return len(text)

        terminal = package.module("commands.terminal").Terminal(read=self.read, out=Out())
        self.terminal = terminal
        self.turns = 0
        taking = terminal.turn

        def counted(who: str) -> Any:  # each turn of the terminal the sampler takes
            self.turns += 1
            return taking(who)

        terminal.turn = counted

        class Out2(Out):
            def write(self, text: str) -> int:
                written = super().write(text)
                if not terminal.holder:
                    events[-1] += " (outside the terminal's turn)"
                return written

        terminal.out = Out2()
        self.budget = package.module("sampler").Budget(budget)
        self.max_tokens = 100_000  # the model's own limit, which capped() lowers on a copy
        self.shown_reply: Any = None  # the text that showed the person the model's reply
        self.model_got: List[Any] = []  # (system, messages) the model was given: a list, shared with
        # the copy capped() makes of this model, which is the one asked

    def read(self, prompt: str) -> str:
        self.events.append("asked")
        if self.events.count("asked") > ASKS:
            raise Looped()
        answer = self.answers.pop(0) if self.answers else EOFError()
        if isinstance(answer, BaseException):
            raise answer
        return str(answer)

    async def next_turn(self, system: str, tools: Any, messages: Any) -> Any:
        held = "" if self.terminal.holder else ", outside the terminal's turn"
        self.events.append(f"asked the model (for at most {self.max_tokens} tokens{held})")
        self.model_got.append((system, list(messages)))
        if self.reply == MODEL_FAILS:
            self.failures.append(self.package.errors.ModelApiError("the model's API answered 529: overloaded, try "
                                                                   "again later"))
            raise self.failures[-1]
        return self.package.module("model").ModelTurn(text=self.reply)


FENCE = re.compile(r"<<([^<>/]*)>>")  # conversation()'s opening marker


def fenced(package: Target, case: Dict[str, Any], got: Any) -> str:
    """What the model was given, in words: the server's words inside conversation()'s
    fence, or not; the fence's marker, for comparing with another request's."""
    sampling = package.module("sampler")
    system, messages = got
    marker = FENCE.search(system) if isinstance(system, str) else None
    ask = sampling.sampling_ask(case.get("alias", "tickets"), case["params"], case.get("cap", 1024))
    if marker is None or (system, messages) != sampling.conversation(ask, marker.group(1)):
        return "the server's words not as conversation() fences them"
    return marker.group(1)


async def sampled(package: Target, case: Dict[str, Any]) -> Told:
    world = Scripted(package, case["answers"], case["reply"], case.get("budget", 3))
    sampler = package.module("sampler").TerminalSampler(world, world.terminal, world.budget, cap=case.get("cap", 1024))
    declined = package.module("sampler").Declined
    sent: Any = None
    at = ""
    try:
        result = await sampler(case.get("alias", "tickets"), case["params"])
    except declined:
        ended = "declined"
    except Looped:
        return Told(f"asked the person {ASKS} times for one request and would have gone on asking: a loop "
                    "that never ends (an empty answer, or the end of input, is a no, not a reason to ask again)")
    except Exception as exc:  # the model's failure, or the learner's own: said after what came before it
        found = raised(exc, package)
        ended, at = str(found).split(DETAIL)[0], found.at
        if world.failures and type(exc) is type(world.failures[-1]) and exc is not world.failures[-1]:
            ended += " (another one than the model's: its words and cause lost)"
    else:
        sent = result
        content = result.get("content") if isinstance(result, dict) else None
        got = content.get("text") if isinstance(content, dict) else None
        ended = f"sent back {got!r:.80} ({result.get('stopReason') if isinstance(result, dict) else '?'})"
    steps = ", ".join(world.events) or "nothing happened"
    turns = f" in {world.turns} turns of the terminal" if world.turns > 1 else ""
    used = world.budget.used
    if world.terminal.holder or (world.terminal._lock is not None and world.terminal._lock.locked()):
        # The next question, a consent or a form, would wait for ever.
        return Told(f"{steps}{turns}; then {ended}; and left the terminal held after it", at)
    seen = await shown_and_fenced(package, case, world, sent, sampler)
    return Told(f"{steps}{turns}; then {ended}; {used} of the run's budget used{seen}", at)


async def shown_and_fenced(package: Target, case: Dict[str, Any], world: Scripted, result: Any,
                           sampler: Any) -> str:
    """Whether the person saw the reply that was sent, and whether the server's
    words reached the model fenced, with a marker new to this request: a second
    request, the same in every way, to the same sampler, must get another (a fixed
    one a server could learn and close), and be asked about twice again."""
    said = []
    sampling = package.module("sampler")
    content = result.get("content") if isinstance(result, dict) else None
    text = content.get("text") if isinstance(content, dict) else None
    if isinstance(text, str) and world.shown_reply is not None:
        ask = sampling.sampling_ask(case.get("alias", "tickets"), case["params"], case.get("cap", 1024))
        same = world.shown_reply == sampling.describe_reply(ask, text, world.name)
        said.append("the person was shown the reply sent" if same else
                    "the person was shown another reply than the one sent")
    if world.model_got:
        first = fenced(package, case, world.model_got[0])
        world.answers, asked_before, budget = ["y", "y"], world.events.count("asked"), world.budget
        budget.limit = budget.used + 1  # room for the second request
        try:
            await sampler(case.get("alias", "tickets"), case["params"])
        except Exception:
            pass
        second = fenced(package, case, world.model_got[-1]) if len(world.model_got) > 1 else None
        if first.startswith("the server's"):
            said.append(first)
        elif second == first:
            said.append("the server's words fenced with the marker of the request before")
        elif first == await fresh_marker(package, case):
            said.append("the server's words fenced with the marker a fresh sampler gives the same request "
                        "(a server could predict it)")
        else:
            said.append("the server's words fenced anew")
        asked = world.events.count("asked") - asked_before
        if asked != 2:
            said.append(f"the same request again asked about {asked} time(s), not twice")
    return "".join(f"; {one}" for one in said)


async def fresh_marker(package: Target, case: Dict[str, Any]) -> str:
    """The marker a new sampler, in a new run, fences the same request with: a marker made
    from the request, a count or the time to the second is the same, and a server could
    work it out; new_fence()'s never is."""
    world = Scripted(package, ["y", "y"], "Shipping Friday.", 1)
    sampler = package.module("sampler").TerminalSampler(world, world.terminal, world.budget, cap=case.get("cap", 1024))
    try:
        await sampler(case.get("alias", "tickets"), case["params"])
    except Exception:
        pass
    return fenced(package, case, world.model_got[0]) if world.model_got else ""


def request(text: str = "Draft a reply to T-101", max_tokens: Any = 200, system: Any = "Be brief.") -> Dict[str, Any]:
    params: Dict[str, Any] = {"messages": [{"role": "user", "content": {"type": "text", "text": text}}],
                              "maxTokens": max_tokens}
    if system is not None:
        params["systemPrompt"] = system
    return params


def show_sampling(case: Dict[str, Any]) -> str:
    return (f"a request {case['params']!r:.120}, the person answering {case['answers']!r:.60}, the model replying "
            f"{case['reply']!r:.40}" + (f", a budget of {case['budget']}" if "budget" in case else "")
            + (f", a cap of {case['cap']} tokens" if "cap" in case else ""))


def sampling_cases(st: Any) -> Any:
    # Mostly requests this client serves, answered mostly yes: the paths past the first question.
    yes = st.sampled_from(["y", "yes", "Y", " yes ", "YES"])
    other = st.sampled_from(["n", "", "no", "yes please", "ok", "true", "1", "yeah", "yep", "sure", "<end of input>"])
    answers = st.lists(st.one_of(yes, yes, other), max_size=3)
    served = st.builds(request, st.text(max_size=20), st.integers(1, 3000), st.one_of(st.none(), st.text(max_size=10)))
    odd = st.builds(request, st.text(max_size=5), st.one_of(st.integers(-2, 0), json_values(st)), st.none())
    params = st.one_of(served, served, served, odd, json_values(st))
    return st.fixed_dictionaries({"params": params, "answers": answers,
                                  "reply": st.sampled_from(["Shipping Friday.", "x" * 50, "", MODEL_FAILS])},
                                 optional={"budget": st.integers(0, 2), "cap": st.integers(1, 20)})


def typed(case: Dict[str, Any]) -> Dict[str, Any]:
    """The case with "<end of input>" as the end of input it stands for (the corpus is JSON)."""
    return {**case, "answers": [EOFError() if a == "<end of input>" else a for a in case["answers"]]}


async def sampled_case(package: Target, case: Dict[str, Any]) -> Told:
    return await sampled(package, typed(case))


async def approvals(package: Target, case: Dict[str, Any]) -> Told:
    """The conversation without how many tokens the model was asked for, or how much
    of the budget went: E11.4's and E11.1's to judge, and a mistake there shows on any
    request that reaches the model."""
    seen = re.sub(r"for at most -?\d+ tokens", "for the tokens allowed", str(await sampled(package, typed(case))))
    return Told(re.sub(r"; \d+ of the run's budget used", "", seen))


YES = ["y", "y"]
E11 = Contract("E11", "TerminalSampler.__call__", (
    Clause("E11.1", "must take one from the run's budget before asking anyone, and ask no one when the budget is "
                    "spent or the request is not one this client serves (sampling_ask declines it)",
           "lab rule: a server may not make the person answer without end", sampled_case, show_sampling,
           edges=({"params": request(), "answers": YES, "reply": "Shipping Friday.", "budget": 0},
                  {"params": request(max_tokens=0), "answers": YES, "reply": "Shipping Friday."},
                  {"params": {"messages": []}, "answers": YES, "reply": "Shipping Friday."},
                  {"params": None, "answers": YES, "reply": "Shipping Friday."}),
           inputs=sampling_cases, count=80),
    Clause("E11.2", "must hold the terminal for the whole request, in one turn (showing, asking, the model, the "
                    "reply), so no other question can take the person's answer; must show the request "
                    "(describe_ask) and ask before anything reaches the model, and must "
                    "not ask the model unless the answer was a clear yes ('y' or 'yes', any case, spaces around): "
                    "anything else, an empty line or the end of input declines (Declined); the model gets the "
                    "server's words only as conversation() fences them, with a marker new to each request "
                    "(new_fence(): one a server could learn, it could close)",
           "MCP sampling: a human in the loop must be able to deny a request", approvals, show_sampling,
           edges=({"params": request(), "answers": ["n"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": [""], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["<end of input>"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["yes please"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": [" YES ", "y"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["\uff59\uff45\uff53", "y"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["", ""], "reply": "Shipping Friday."},
                  # near-yes words are not a clear yes, at either question
                  {"params": request(), "answers": ["ok", "y"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["yeah", "y"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["sure", "y"], "reply": "Shipping Friday."}),
           inputs=sampling_cases, count=120),
    Clause("E11.3", "must show the model's reply (describe_reply), the very text that would go back, before "
                    "asking to send it, and send it back (reply_result) only after a second clear yes; "
                    "otherwise decline",
           "MCP sampling: the human may review and deny the reply before it goes back", approvals,
           show_sampling,
           edges=({"params": request(), "answers": YES, "reply": "Shipping Friday."},
                  {"params": request(), "answers": YES, "reply": ""},
                  {"params": request(), "answers": YES, "reply": "\n   Fine.  \n"},
                  {"params": request(), "answers": ["y", "n"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["y", "<end of input>"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["y"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["y", "ok"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["y", "yep"], "reply": "Shipping Friday."}),
           inputs=sampling_cases, count=120),
    Clause("E11.4", "must ask the model for no more than the request's capped tokens (capped), cut the reply "
                    "to them (cut_reply) and say so in stopReason: 'maxTokens' only when something was cut, "
                    "'endTurn' when the reply ended of itself, however far its maxTokens was capped",
           "MCP sampling: maxTokens bounds the reply; lab rule: the client's cap bounds maxTokens", sampled_case,
           show_sampling,
           edges=({"params": request(max_tokens=2), "answers": YES, "reply": "x" * 50},
                  {"params": request(max_tokens=10), "answers": YES, "reply": "x" * 40},
                  {"params": request(max_tokens=10), "answers": YES, "reply": "x" * 41},
                  {"params": request(max_tokens=3000), "answers": YES, "reply": "x" * 50, "cap": 3},
                  {"params": request(max_tokens=200), "answers": YES, "reply": "x" * 50},
                  # capped, and nothing cut: the reply ended of itself
                  {"params": request(max_tokens=3000), "answers": YES, "reply": "Shipping Friday."},
                  {"params": request(max_tokens=3000), "answers": YES, "reply": "Shipping Friday.", "cap": 4},
                  {"params": request(max_tokens=3000), "answers": YES, "reply": "Shipping Friday!!", "cap": 4}),
           inputs=sampling_cases, count=80),
    Clause("E11.5", "must let the model's failure after the first yes out as it came (ModelApiError): not a "
                    "reply made up in its place, nor Declined (the server would hear that the person said no), "
                    "and leave the terminal free for the next question",
           "MCP sampling: the result is the model's completion; lab rule: a decline is the person's alone",
           sampled_case, show_sampling,
           edges=({"params": request(), "answers": YES, "reply": MODEL_FAILS},
                  {"params": request(), "answers": ["y"], "reply": MODEL_FAILS},
                  {"params": request(), "answers": ["n"], "reply": MODEL_FAILS}),
           inputs=lambda st: sampling_cases(st).map(lambda case: {**case, "reply": MODEL_FAILS}), count=20),
    Clause("E11.6", ON_TRIO.format(calls="asyncio.wait_for around the person's answer"), TRIO_SOURCE, approvals,
           show_sampling,
           edges=({"params": request(), "answers": YES, "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["n"], "reply": "Shipping Friday."},
                  {"params": request(), "answers": ["y", "n"], "reply": "Shipping Friday."}),
           inputs=sampling_cases, count=20, loop="own", backend="trio"),
))

CONTRACTS: Tuple[Contract, ...] = (E10, E11)
