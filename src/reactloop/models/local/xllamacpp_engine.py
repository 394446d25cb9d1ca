"""Inside the model process: llama.cpp's own server from the xllamacpp wheel as an ``Engine``.

xllamacpp ships llama.cpp prebuilt (x86-64 with AVX2, one wheel for every Python from 3.10), so
installing it compiles nothing. Its ``Server`` is llama-server running in this process; it
listens on a Unix socket in a private folder, and the engine speaks llama-server's native API
to it: ``/tokenize`` and ``/detokenize`` (exact tokens, special tokens parsed only in the chat
template's own text) and a streamed ``/completion`` with the prompt as token ids and
``return_tokens``, so that a reply comes back into the next prompt as the tokens it was
generated as, and ``cache_prompt`` keeps the prefix in the KV cache between steps.

The deadline is kept while the prompt is read: with ``return_progress`` the server reports
after each batch of ``PROMPT_BATCH`` tokens, and closing the stream then cancels the request.
"""

from __future__ import annotations

import shutil
import signal
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import orjson

from reactloop.errors import MissingDependency, ModelError, UsageError
from reactloop.models.base import ModelRequest
from reactloop.models.local.catalog import LOCAL_EXTRA_HINT
from reactloop.models.local.cpu import build_has_amx, extra_buffer_types_allowed
from reactloop.models.local.generation import Generation, shared_prefix
from reactloop.models.local.options import LocalOptions

PROMPT_BATCH = 64  # tokens read between two looks at the deadline (a few tenths of a second)
FINISHED = {"eos": "stop", "word": "stop"}  # llama-server's stop_type → our finish reason


def require_xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError:
        raise MissingDependency(f"local models need xllamacpp: {LOCAL_EXTRA_HINT}") from None
    except OSError as exc:  # installed, but its module does not load (say, no libgomp.so.1)
        raise MissingDependency(
            f"xllamacpp is installed but cannot be loaded ({exc}); on Debian or Ubuntu: "
            "apt-get install libgomp1"
        ) from None
    return xllamacpp


def system_info() -> str:
    return str(require_xllamacpp().get_system_info())


class XllamacppEngine:
    """One in-process llama-server with one slot, reached over its private socket."""

    name = "xllamacpp"

    def __init__(self, server: Any, folder: Path, extra_bufts: bool) -> None:
        self._server = server  # kept alive: it is the server
        self._folder = folder
        self._extra_bufts = extra_bufts
        transport = httpx.HTTPTransport(uds=str(folder / "llama.sock"))
        # A fresh connection per request: llama-server may close one after a streamed reply.
        self._http = httpx.Client(transport=transport, base_url="http://llama", timeout=None,
                                  limits=httpx.Limits(max_keepalive_connections=0))  # fmt: skip
        self._cached: list[int] = []  # what the slot's KV cache holds, as far as we know
        # The template llama-server uses: the file's own, else ChatML.
        self.chat_template: str | None = self._get("/props").get("chat_template") or None
        bos = self._post("/tokenize", {"content": "", "add_special": True})  # [BOS] or []
        self.bos: list[int] = list(bos["tokens"])

    @classmethod
    def load(cls, path: Path, options: LocalOptions, folder: Path | None = None) -> XllamacppEngine:
        """``path`` loaded by a llama-server listening in ``folder`` (a new private one if
        None); the folder is removed when loading fails and when the engine closes."""
        xllamacpp = require_xllamacpp()
        extra_bufts = extra_buffer_types_allowed(
            options.extra_buffer_types, built_with_amx=build_has_amx(system_info())
        )
        folder = folder or Path(tempfile.mkdtemp(prefix="reactloop-llama-"))
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = options.n_ctx
        params.n_batch = PROMPT_BATCH
        params.n_parallel = 1
        params.warmup = False
        params.cache_ram_mib = 0
        params.swa_full = True  # else a sliding-window model (Gemma 3) rereads its prompt
        params.verbosity = -1
        params.no_extra_bufts = not extra_bufts
        params.cpuparams.n_threads = options.n_threads
        params.cpuparams_batch.n_threads = options.n_threads
        params.hostnames = [str(folder / "llama.sock")]
        try:
            server = xllamacpp.Server(params)
        except RuntimeError:
            shutil.rmtree(folder, ignore_errors=True)
            raise UsageError(f"cannot load model file {path}: llama.cpp refused it") from None
        finally:
            # llama-server takes SIGINT and SIGTERM for itself; Ctrl-C is the parent's to handle.
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        return cls(server, folder, extra_bufts)

    def info(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "use_extra_bufts": self._extra_bufts,
            "system_info": system_info(),
            "socket_folder": str(self._folder),  # the parent removes it if this process is killed
        }

    def tokenize(self, text: str, special: bool) -> list[int]:
        body = {"content": text, "add_special": False, "parse_special": special}
        return list(self._post("/tokenize", body)["tokens"])

    def detokenize(self, tokens: Sequence[int]) -> str:
        return str(self._post("/detokenize", {"tokens": list(tokens)})["content"])

    def reusable(self, prompt: Sequence[int]) -> int:
        return shared_prefix(self._cached, prompt)

    def generate(
        self,
        prompt: list[int],
        *,
        grammar: str | None,
        request: ModelRequest,
        options: LocalOptions,
        max_tokens: int,
        deadline: float | None,
    ) -> Generation:
        body: dict[str, Any] = {
            "prompt": prompt,
            "n_predict": max_tokens,
            "temperature": options.temperature,
            "seed": options.seed,
            "top_k": 40,
            "top_p": 0.95,
            "min_p": 0.05,
            "repeat_penalty": options.repeat_penalty,
            "stop": [stop for stop in request.stop if stop],
            "cache_prompt": True,
            "return_tokens": True,
            "return_progress": True,
            "stream": True,
        }
        if grammar is not None:
            body["grammar"] = grammar
        result = Generation()
        started = time.monotonic()
        self._cached = []  # unknown until the request ends
        try:
            final = self._stream(body, result, request, deadline)
        finally:
            result.seconds = time.monotonic() - started
        if final is not None:
            self._finish(result, final, prompt)
        return result

    def _stream(
        self,
        body: dict[str, Any],
        result: Generation,
        request: ModelRequest,
        deadline: float | None,
    ) -> dict[str, Any] | None:
        """Read the streamed reply into ``result``; the last chunk, or None at the deadline."""
        with self._http.stream("POST", "/completion", content=orjson.dumps(body)) as response:
            if response.status_code != 200:
                raise ModelError(f"llama.cpp refused the request: {_error(response.read())}")
            for chunk in _chunks(response.iter_lines()):
                if "error" in chunk:
                    raise ModelError(f"llama.cpp: {_error(orjson.dumps(chunk))}")
                if "prompt_progress" in chunk:  # a batch of the prompt read; its tokens are not
                    progress = chunk["prompt_progress"]
                    result.prompt_evaluated = max(0, progress["processed"] - progress["cache"])
                    if deadline is not None and time.monotonic() > deadline:
                        result.deadline_hit = True
                        return None
                    continue
                text = str(chunk.get("content", ""))
                result.tokens.extend(chunk.get("tokens") or ())
                result.text += text
                if text and request.on_text is not None:
                    request.on_text(text)
                if chunk.get("stop"):
                    return chunk
                if deadline is not None and time.monotonic() > deadline:
                    result.deadline_hit = True
                    return None  # leaving the block closes the stream: the server cancels
        raise ModelError("llama.cpp ended its reply without a last chunk")

    def _finish(self, result: Generation, final: dict[str, Any], prompt: list[int]) -> None:
        # The slot's cache holds every token but the last one generated (never read back).
        self._cached = prompt + result.tokens[:-1]
        stopped = final.get("stop_type")
        result.finish_reason = "stop" if stopped in FINISHED else "length"
        timings = final.get("timings") or {}
        generated = int(timings.get("predicted_n", 0))
        if stopped == "eos" and result.tokens:  # the end-of-generation token is no reply text
            result.tokens.pop()
            generated -= 1
        result.perf = {
            "t_p_eval_ms": float(timings.get("prompt_ms", 0.0)),
            "t_eval_ms": float(timings.get("predicted_ms", 0.0)),
            "n_p_eval": float(timings.get("prompt_n", 0)),
            "n_eval": float(max(generated, 0)),
        }
        result.prompt_evaluated = int(timings.get("prompt_n", 0))

    def probe(self, prompt: str, max_tokens: int) -> str:
        reply = self._post("/completion", {"prompt": prompt, "n_predict": max_tokens,
                                           "temperature": 0.0})  # fmt: skip
        return str(reply.get("content", ""))

    def close(self) -> None:
        self._http.close()
        self._server = None
        shutil.rmtree(self._folder, ignore_errors=True)

    def _get(self, path: str) -> dict[str, Any]:
        return _reply(self._http.get(path))

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return _reply(self._http.post(path, content=orjson.dumps(body)))


def _reply(response: httpx.Response) -> dict[str, Any]:
    if response.status_code != 200:
        raise ModelError(f"llama.cpp refused the request: {_error(response.content)}")
    data = orjson.loads(response.content)
    if not isinstance(data, dict):
        raise ModelError(f"llama.cpp sent {type(data).__name__}, not an object")
    return data


def _chunks(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if line.startswith("data: "):
            chunk = orjson.loads(line[6:])
            if isinstance(chunk, dict):
                yield chunk


def _error(content: bytes) -> str:
    """llama-server's error message (``{"error": {"message": …}}``), or the start of the body."""
    try:
        data = orjson.loads(content)
        message = data["error"]["message"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        return content[:300].decode("utf-8", "replace")
    return str(message)[:300]
