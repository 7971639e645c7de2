"""The Claude tool-use loop: the model asks for tool calls, they run here, results go back.

Tools run locally through the shared registry, so the model sees exactly the JSON the CLI
prints. Failures are sorted by who can fix them: a tool error goes back to the model as an
`is_error` result (it can change its arguments); a transient API error is retried by the SDK
(`max_retries`, honouring `retry-after`); anything else ends the run with a `failed` status and
a reason, never a traceback. Every run writes the debug_helper files and a JSONL transcript.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .outputs import Mode, Outputs, RunStatus, StatusDoc, write_outputs
from .prompts import reminder_message, system_prompt, task_message
from .protocol import FinalAnswer, data_block, parse_final
from .registry import MAX_RESULT_CHARS, REGISTRY, Registry, ToolError, bounded_result
from .transcript import Transcript

KEY_ENV = "ANTHROPIC_API_KEY"
MODEL_ENV = "BARRIER_VIZ_MODEL"
# A current Sonnet from the SDK's model list: strong enough to apply the phase model, cheaper
# than Opus for a report that is mostly assembling tool facts.
DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_TURNS = 24
DEFAULT_MAX_TOKENS = 16_000  # below the SDK's non-streaming ceiling; a five-section report fits
DEFAULT_MAX_RETRIES = 4
TRANSCRIPT_FILE = "transcript.jsonl"
# A tool result this large is a sign of `include_all` on a big unit; cut it and say so rather
# than spend the context window on it.
MAX_TOOL_RESULT_CHARS = MAX_RESULT_CHARS  # one bound for every surface a model reads (registry)


class AgentSetupError(Exception):
    """The run cannot start (no API key, SDK not installed): a usage problem, exit 2."""


@dataclass(frozen=True)
class AgentConfig:
    input: str
    out_dir: Path
    unit: str | None = None
    func: str | None = None
    model: str = DEFAULT_MODEL
    max_turns: int = DEFAULT_MAX_TURNS
    max_tokens: int = DEFAULT_MAX_TOKENS


@dataclass
class AgentResult:
    status: StatusDoc
    turns: int
    tool_calls: int
    transcript_path: Path
    usage: dict[str, int] = field(default_factory=dict)


def resolve_model(cli_model: str | None) -> str:
    """--model wins, then $BARRIER_VIZ_MODEL, then the default."""
    return cli_model or os.environ.get(MODEL_ENV) or DEFAULT_MODEL


def api_key_from_env() -> str:
    key = os.environ.get(KEY_ENV, "").strip()
    if not key:
        raise AgentSetupError(f"the agent needs an Anthropic API key: set {KEY_ENV}")
    return key


def make_client(api_key: str, *, max_retries: int = DEFAULT_MAX_RETRIES, http_client: Any = None) -> Any:
    """An `anthropic.Anthropic` client; `http_client` (an httpx2.Client) lets tests inject a
    mock transport. The SDK is imported here so the rest of the CLI never pays for it."""
    try:
        import anthropic
    except ImportError as exc:
        raise AgentSetupError("the agent needs the anthropic SDK: pip install 'barrier-viz[agent]'") from exc
    return anthropic.Anthropic(api_key=api_key, max_retries=max_retries, http_client=http_client)


def run_agent(config: AgentConfig, client: Any, *, registry: Registry = REGISTRY, secrets: list[str] | None = None) -> AgentResult:
    """Run the loop to a final answer, a failure or the turn limit; write the output files."""
    return _Run(config, client, registry, secrets or []).run()


def _block_param(block: Any) -> dict[str, Any]:
    """An assistant content block as a request parameter (what the API accepts back)."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}
    return block.model_dump(mode="json", exclude_none=True)


class _Run:
    """The state of one agent run: the conversation, the transcript and the counters."""

    def __init__(self, config: AgentConfig, client: Any, registry: Registry, secrets: list[str]):
        self.config = config
        self.client = client
        self.registry = registry
        self.secrets = [s for s in secrets if s]
        self.messages: list[dict[str, Any]] = []
        self.turns = 0
        self.tool_calls = 0
        self.usage: dict[str, int] = dict.fromkeys(("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"), 0)
        self.transcript_path = config.out_dir / TRANSCRIPT_FILE
        self.log = Transcript(self.transcript_path, self.secrets)

    def run(self) -> AgentResult:
        try:
            outputs = self._converse()
        except Exception as exc:  # noqa: BLE001 - debug_helper reads status.json; give it a clean failure
            self.log.event("internal_error", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
            outputs = self._failed(f"internal error in the agent loop: {type(exc).__name__}: {_short(str(exc))}")
        status = write_outputs(self.config.out_dir, outputs.model_copy(update={"reason": self._scrub(outputs.reason)}))
        self.log.event("end", status=status.status, reason=status.reason, turns=self.turns, tool_calls=self.tool_calls, usage=self.usage)
        self.log.close()
        return AgentResult(status, self.turns, self.tool_calls, self.transcript_path, self.usage)

    # -- the conversation ---------------------------------------------------------------------

    def _converse(self) -> Outputs:
        import anthropic

        cfg = self.config
        system_text = system_prompt(self.registry)
        # The tools and the system prompt are resent every turn; a cache breakpoint after them
        # lets later turns read that prefix from the prompt cache instead of paying for it again.
        system = [{"type": "text", "text": system_text, "cache_control": {"type": "ephemeral"}}]
        tools = self.registry.api_schemas()
        self.messages.append({"role": "user", "content": task_message(cfg.input, cfg.unit, cfg.func)})
        self.log.event("start", model=cfg.model, input=cfg.input, unit=cfg.unit, func=cfg.func, max_turns=cfg.max_turns,
                       tools=self.registry.names(), system=system_text)
        reminded = False
        last_text = ""
        sent = 0
        while self.turns < cfg.max_turns:
            self.turns += 1
            self.log.event("request", turn=self.turns, new_messages=self.messages[sent:])
            sent = len(self.messages)
            try:
                response = self.client.messages.create(
                    model=cfg.model, max_tokens=cfg.max_tokens, system=system, tools=tools, messages=self.messages
                )
            except anthropic.APIStatusError as exc:
                return self._failed(f"the Anthropic API answered HTTP {exc.status_code} (after the SDK's retries): {_short(exc.message)}")
            except anthropic.APIConnectionError as exc:
                return self._failed(f"could not reach the Anthropic API (after the SDK's retries): {_short(str(exc))}")
            except anthropic.AnthropicError as exc:
                return self._failed(f"Anthropic SDK error: {type(exc).__name__}: {_short(str(exc))}")
            self._count_usage(response)
            content = [_block_param(b) for b in response.content]
            self.log.event("response", turn=self.turns, stop_reason=response.stop_reason, content=content)
            self.messages.append({"role": "assistant", "content": content})
            tool_uses = [b for b in response.content if b.type == "tool_use"]
            if tool_uses:
                self.messages.append({"role": "user", "content": [self._tool_result(b) for b in tool_uses]})
                continue
            last_text = "".join(b.text for b in response.content if b.type == "text")
            answer = parse_final(last_text)
            if answer.complete:
                return self._finished(answer)
            if response.stop_reason == "refusal":
                return self._failed("the model declined to answer", partial=last_text)
            if response.stop_reason == "max_tokens":
                return self._failed(f"the model's answer was cut off at max_tokens={cfg.max_tokens}", partial=last_text)
            if reminded:
                return self._failed("the model's final answer did not follow the finishing format twice", partial=last_text)
            reminded = True
            self.messages.append({"role": "user", "content": reminder_message()})
        return self._failed(f"turn limit reached: {cfg.max_turns} model turns without a final report", partial=last_text)

    def _tool_result(self, block: Any) -> dict[str, Any]:
        """Run one requested tool and wrap its document (or its error) as a tool_result."""
        self.tool_calls += 1
        arguments = dict(block.input or {})
        is_error = False
        try:
            self._check_input(arguments)
            doc = self.registry.get(block.name).call(arguments)
            text = doc.model_dump_json(by_alias=True)
        except ToolError as exc:
            text, is_error = str(exc), True
        except Exception as exc:  # noqa: BLE001 - an analysis bug must not end the run; the model reports the gap
            text, is_error = f"internal error in tool {block.name}: {type(exc).__name__}: {exc}", True
        text, cut = bounded_result(text, MAX_TOOL_RESULT_CHARS)
        text = data_block(block.name, text, json=not is_error and not cut)
        self.log.event("tool", turn=self.turns, id=block.id, name=block.name, arguments=arguments, is_error=is_error,
                       chars=len(text), result=text)
        result: dict[str, Any] = {"type": "tool_result", "tool_use_id": block.id, "content": text}
        if is_error:
            result["is_error"] = True
        return result

    def _check_input(self, arguments: dict[str, Any]) -> None:
        """The model may only analyse the input it was given, not any file on this machine."""
        given = arguments.get("input")
        if given is None or given == self.config.input:
            return
        if isinstance(given, str) and Path(given).resolve() == Path(self.config.input).resolve():
            return
        raise ToolError(f"this session analyses only {self.config.input!r}; pass input exactly as given")

    def _count_usage(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        for key in self.usage:
            self.usage[key] += int(getattr(usage, key, 0) or 0)

    # -- endings --------------------------------------------------------------------------------

    def _finished(self, answer: FinalAnswer) -> Outputs:
        cfg = self.config
        if answer.needs_context is not None:
            report = answer.report or f"# Barrier visualization: {cfg.input}\n\nThe analysis needs more context: {answer.needs_context}\n"
            return Outputs(status=RunStatus.needs_context, reason=answer.needs_context, report=report, insights=answer.insights)
        assert answer.report is not None
        reason = f"report composed by {cfg.model} in {self.turns} turn(s) with {self.tool_calls} tool call(s)"
        return Outputs(status=RunStatus.success, reason=reason, report=answer.report, insights=answer.insights)

    def _failed(self, reason: str, partial: str = "") -> Outputs:
        report = f"# Barrier visualization: not produced\n\nThe agent run failed: {reason}.\n"
        if partial.strip():
            report += "\n## The model's last message\n\n" + partial.strip() + "\n"
        return Outputs(status=RunStatus.failed, reason=reason, report=report, insights=[],
                       suggested_next_modes=[Mode.deterministic])

    def _scrub(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "[REDACTED]")
        return text


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
