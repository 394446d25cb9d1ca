"""How an eval runs: episodes planned, scheduled on a backend, run, continued and stored.

Files, in reading order:

- ``spec``: ``Rung`` (a model of the ladder) and ``EpisodeSpec`` (one episode to run)
- ``ladder``: rungs from ``--model`` options or a models file
- ``throttle``: adaptive concurrency per endpoint, every model call through its gate
- ``agent_tree``: a task's sub-agents run, and the tree scored as one agent
- ``continued``: an interrupted episode continued from its journal, or started again
- ``episode``: one episode run and checked, as its record
- ``oracle``: a deterministic model for tests and benchmarks
- ``backends``: the scheduler (``dispatch``) and the in-process backend
- ``cores``: how many worker processes (the usable cores, the rule)
- ``pipes``: the two one-way pipes to each worker, which cannot deadlock
- ``worker_messages``: what the driver tells a worker over its tasks pipe
- ``process_worker``: a worker process, a ``LocalBackend`` of its own
- ``forkserver``: what the forkserver imports for every worker, and its early start
- ``process_backend``: episodes in worker processes (``--workers N``)
- ``ray_workspaces``: task folders sent to the Ray actors
- ``ray_journals``: journals between the Ray driver and its actors
- ``ray_actor``: an actor on a Ray node, running episodes
- ``ray_backend``: episodes on Ray actors
- ``memory``: freed heap given back to the system
- ``progress``: the progress bar
- ``plan``: the episodes of a config, checked, and its manifest
- ``runner``: ``run_eval``, from a config to the stored records and the report
"""
