"""Text ReAct: any chat model becomes a tool-calling one, through ``Thought`` / ``Action`` text.

``ReactTextModel`` is the one public class. Files:

- ``adapter.py``: ``ReactTextModel``: renders the history, calls the inner model, reads its reply.
- ``parse.py``: one reply as an ``Action`` (``tool[argument]`` or ``Finish[answer]``) or a problem.
- ``prompt.py``: the system prompt listing the tools, and ``Observation:`` lines.
"""

from reactloop.models.react.adapter import ReactTextModel

__all__ = ["ReactTextModel"]
