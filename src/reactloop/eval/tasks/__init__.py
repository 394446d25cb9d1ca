"""What an eval asks: tasks, their checks, the suites and the tools they need.

Files, in reading order:

- ``tasks``: a task (one JSONL line), its checks (``check_answer``), suites from files
- ``agent_specs``: a task's sub-agents, as a suite line gives them
- ``bet_tools``: offline twins of the weather bet's tools (the ``bet`` family)
- ``coding``: the ``coding`` suite, a failing test fixed in a workspace
- ``suites``: the built-in suites and ``load_suite``
- ``toolset``: an episode's tools and its workspace
"""
