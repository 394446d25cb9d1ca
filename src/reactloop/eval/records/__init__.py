"""What an eval keeps: each episode's record, its protocol health, the store on disk, the
estimators over them.

Files, in reading order:

- ``record``: ``EpisodeRecord``, one episode's record, and its JSON form
- ``health``: protocol health counted from a run's events (live, or from its journal)
- ``store``: one JSON file per episode, written atomically; what ``--resume`` finds
- ``metrics``: Wilson, pass@k, pass^k, McNemar, percentiles
"""
