"""llama.cpp's own llama-server, prebuilt (the xllamacpp wheel), on 127.0.0.1 until SIGTERM.

``python tests/llama_server_main.py --model M.gguf --port P [options]`` is the tests' real
llama.cpp server: the same C++ server ``llama-server`` is, compiled into the wheel the local
extra installs, so no test compiles anything. It serves ``/v1/chat/completions``,
``/v1/messages`` and ``/v1/responses`` with the model's chat template rendered by llama.cpp's
Jinja engine (``--jinja``), or the template file given. Started by ``local_servers.llama_server``.
"""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path

import xllamacpp


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", required=True)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--chat-template-file")
    parser.add_argument("--ctx", type=int, default=2048)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-cache-prompt", action="store_true")
    return parser.parse_args()


def params(args: argparse.Namespace) -> object:
    chosen = xllamacpp.CommonParams()
    chosen.model.path = args.model
    chosen.hostnames = ["127.0.0.1"]
    chosen.port = args.port
    chosen.n_ctx = args.ctx
    chosen.n_parallel = args.parallel
    chosen.cpuparams.n_threads = args.threads
    chosen.cpuparams_batch.n_threads = args.threads
    chosen.sampling.seed = args.seed
    chosen.use_jinja = True
    chosen.no_extra_bufts = True  # llama-server --no-repack: no AMX kernel (see cpu.py)
    chosen.warmup = False
    chosen.cache_prompt = not args.no_cache_prompt
    if args.chat_template_file:
        chosen.chat_template = Path(args.chat_template_file).read_text(encoding="utf-8")
    return chosen


def main() -> None:
    args = parse()
    stop = threading.Event()
    server = xllamacpp.Server(params(args))
    # llama-server takes SIGINT and SIGTERM for itself when it starts; they end this process.
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"listening on http://127.0.0.1:{args.port}", flush=True)
    stop.wait()
    del server


if __name__ == "__main__":
    main()
