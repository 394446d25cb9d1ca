"""What turning llama.cpp's extra buffer types off costs (the cure for the AMX crash).

    python benchmarks/extra_buffer_types.py [--repeat 5]

For each embedded model, with ``use_extra_bufts`` on and off (the repacked CPU layouts, and on
AMX CPUs the AMX kernel): prompt evaluation and generation speed, median of the repeats, and the
ratio off/on. Runs each setting in its own process, in turn (ABAB…), so that load and machine
noise fall on both alike. On a CPU with AMX, ``on`` crashes: that is the bug being cured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

PROMPT = "Answer the question. You can use these tools: calculator. " * 12
CHILD = r"""
import json, sys, time
from pathlib import Path
from reactloop.models.local.catalog import model_path
from reactloop.models.local.engine import load_llama
from reactloop.models.local.options import LocalOptions
name, setting, prompt = sys.argv[1], sys.argv[2], sys.argv[3]
llama = load_llama(model_path(name), LocalOptions(extra_buffer_types=setting))
tokens = llama.tokenize(prompt.encode(), add_bos=True)
start = time.perf_counter(); llama.eval(tokens); prompt_s = time.perf_counter() - start
start = time.perf_counter(); n = 0
for token in llama.generate(tokens, temp=0.0):
    n += 1
    if n == 64: break
gen_s = time.perf_counter() - start
print(json.dumps({"prompt_tps": len(tokens) / prompt_s, "gen_tps": n / gen_s,
                  "n_prompt": len(tokens),
                  "use_extra_bufts": bool(llama.model_params.use_extra_bufts)}))
"""


def measure(name: str, setting: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, name, setting, PROMPT],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--models", default="smollm2-135m,gemma3-270m")
    args = parser.parse_args()
    for name in args.models.split(","):
        runs: dict[str, list[dict[str, float]]] = {"on": [], "off": []}
        for _ in range(args.repeat):
            for setting in ("on", "off"):
                runs[setting].append(measure(name, setting))
        row = {}
        for setting, results in runs.items():
            row[setting] = {
                key: round(statistics.median(r[key] for r in results), 1)
                for key in ("prompt_tps", "gen_tps")
            }
        ratio = {
            key: round(row["off"][key] / row["on"][key], 2) for key in ("prompt_tps", "gen_tps")
        }
        print(json.dumps({"model": name, **row, "off/on": ratio}))


if __name__ == "__main__":
    main()
