"""What `ask` prints: each step the model took, where it really went, what
came back and, in code mode, each script with the calls it made and what it
printed. Every server word, and the model's (which may echo a server's), is
shown through `shown`: visible, never markup, never a terminal control.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Sequence

from ..agent import AgentRun, Step
from ..aggregator import NOT_SENT
from ..code_mode.run_script import RUN_SCRIPT, ScriptRun
from ..model import result_text
from ..untrusted import json_text, shown
from .bill import bill_of


def shorten(text: str, limit: int = 160) -> str:
    flat = " ".join(shown(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def script_lines(script: ScriptRun, whole: bool = False) -> Iterator[str]:
    """A script run as plain lines (rich markup is added by the caller). `whole`:
    everything it printed, line by line (`script`; code mode already kept only
    what can be shown); otherwise one shortened line (a step of `ask`)."""
    yield "  script:"
    for line in script.script.splitlines():
        yield "    | " + shown(line, 200)
    for number, call in enumerate(script.calls, 1):
        held = (call.result.get("_meta") or {}).get(NOT_SENT)
        outcome = f"not sent: {shown(str(held))}" if held else ("isError" if call.is_error else "ok")
        yield (f"  call {number}: {shown(call.alias, 40)} / {shown(call.original_name, 80)} "
               f"{shorten(json_text(call.arguments), 120)} -> {outcome}")
    if script.stopped:
        yield f"  stopped ({script.stopped}): {shorten(script.reason, 300)}"
    if whole and script.printed.strip():
        yield "  printed:"
        for line in script.printed.rstrip("\n").splitlines():
            yield "    > " + shown(line)
        if script.printed_chars > len(script.printed):
            yield f"  ({script.printed_chars - len(script.printed):,} more characters were printed and cut)"
        return
    yield "  printed: " + (shorten(script.printed.rstrip("\n"), 300) if script.printed.strip() else "(nothing)")


def print_run(run: AgentRun, note: str, scripts: Sequence[ScriptRun] = ()) -> None:
    """The step transcript: the name the model chose, where it really went, what came back."""
    from rich.console import Console
    from rich.markup import escape

    console = Console(highlight=False, soft_wrap=True)
    console.print(f"[dim]{escape(shown(note))}[/dim]")
    console.print(f"[bold]question:[/bold] {escape(shown(run.question))}")
    left = list(scripts)
    for number, step in enumerate(run.steps, 1):
        if step.model_name == RUN_SCRIPT and left:
            console.print(f"[bold]step {number}:[/bold] model wrote a script for [cyan]{RUN_SCRIPT}[/cyan]")
            for line in script_lines(left.pop(0)):
                console.print(escape(line))
            continue
        held = (step.result.get("_meta") or {}).get(NOT_SENT)
        where = f"{step.alias} / {step.original_name}" if step.alias else "(not in the tool table)"
        went = f"[yellow]not sent: {escape(shown(held))}[/yellow]" if held else \
            f"sent to [green]{escape(shown(where))}[/green]"
        console.print(f"[bold]step {number}:[/bold] model chose [cyan]{escape(shown(step.model_name))}[/cyan]"
                      f" -> {went}")
        console.print(f"  arguments: {escape(shown(json_text(step.arguments)))}")
        flag = "  [red]isError: true[/red]" if step.is_error else ""
        console.print(f"  result: {escape(shorten(result_text(step.result)))}{flag}")
    if run.stopped_at_limit:
        console.print(f"[yellow]stopped: the step limit was reached after {run.model_turns} "
                      "model turns[/yellow]")
    # The answer is the model's, which may echo a server's words: shown line by line, made safe.
    console.print("[bold]answer:[/bold] " + "\n".join(escape(shown(line)) for line in run.answer.splitlines()))
    if run.usage:
        console.print(f"[dim]tokens: {escape(usage_line(run.usage))}[/dim]")


def usage_line(usage: Dict[str, int]) -> str:
    """The run's tokens as billed (cache writes and reads apart), or as the API named them."""
    bill = bill_of(usage)
    return bill.line() if bill is not None else ", ".join(f"{k} {v}" for k, v in usage.items())


def step_json(step: Step) -> Dict[str, Any]:
    return {"model_name": step.model_name, "alias": step.alias, "original_name": step.original_name,
            "arguments": step.arguments, "result": step.result, "isError": step.is_error,
            "structured": step.structured}


def script_json(script: ScriptRun) -> Dict[str, Any]:
    return {"script": script.script, "printed": script.printed, "stopped": script.stopped,
            "reason": script.reason,
            "calls": [{"alias": c.alias, "original_name": c.original_name, "arguments": c.arguments,
                       "isError": c.is_error} for c in script.calls]}


def run_json(run: AgentRun, note: str, scripts: Sequence[ScriptRun] = ()) -> Dict[str, Any]:
    found: Dict[str, Any] = {"model": note, "question": run.question, "answer": run.answer,
                             "stopped_at_limit": run.stopped_at_limit, "model_turns": run.model_turns,
                             "usage": run.usage, "steps": [step_json(s) for s in run.steps]}
    bill = bill_of(run.usage)
    if bill is not None:
        found["bill"] = bill.as_json()
    if scripts:
        found["scripts"] = [script_json(s) for s in scripts]
    return found

