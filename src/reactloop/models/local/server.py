"""``python -m reactloop.models.local.server ARGS``: llama-cpp-python's OpenAI-compatible server
(``python -m llama_cpp.server ARGS``) with the same CPU cure as the embedded model.

On a CPU with AMX, llama.cpp's AMX kernel crashes the server at its first request; this entry
point loads models with the extra buffer types off there (see ``cpu.py``), as ``llama-server
--no-repack`` does for llama.cpp's own server. Everything else is llama_cpp.server's.
"""

from __future__ import annotations

import runpy

from reactloop.models.local.cpu import build_has_amx, extra_buffer_types_allowed
from reactloop.models.local.engine import model_params_defaults, require_llama_cpp, system_info


def main() -> None:
    llama_cpp = require_llama_cpp()
    allowed = extra_buffer_types_allowed(built_with_amx=build_has_amx(system_info()))
    with model_params_defaults(llama_cpp, use_extra_bufts=allowed):
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
