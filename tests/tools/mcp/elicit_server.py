"""An MCP server (the SDK's ``MCPServer``) whose tools ask the user a question mid-call
(elicitation: how many seats, with a default) and answer with what they were told.

    python elicit_server.py              # stdio, the handshake era
    python elicit_server.py http PORT    # stateless streamable HTTP, the 2026-07-28 era

``book`` asks with ``ctx.elicit`` (a request from server to client, which only the handshake
era has); ``reserve`` asks through a resolver (``Resolve``/``Elicit``), which the 2026-07-28
era sends as an ``InputRequiredResult`` the client answers by calling again (SEP-2322) and the
handshake era as the same request from server to client. Each counts its calls in ``calls``.
Over HTTP it says ``listening`` on stderr once it listens.
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Elicit, ElicitationResult, Resolve
from pydantic import BaseModel, Field

server = MCPServer("elicit")
calls = {"book": 0, "reserve": 0}


class Seats(BaseModel):
    seats: int = Field(default=2, description="How many seats")
    note: str = Field(default="", description="Anything to add")


@server.tool()
async def book(show: str, ctx: Context) -> str:
    """Book seats for a show (asks the user how many)."""
    calls["book"] += 1
    try:
        answer = await ctx.elicit(f"How many seats for {show}?", Seats)
    except Exception as exc:  # a client that cannot be asked refuses the request
        return json.dumps({"show": show, "refused": str(exc)})
    data = answer.data.model_dump() if answer.action == "accept" else None
    return json.dumps({"show": show, "action": answer.action, "data": data, "calls": calls})


def how_many(show: str) -> Elicit[Seats]:
    return Elicit(f"How many seats for {show}?", Seats)


@server.tool()
def reserve(show: str, answer: Annotated[ElicitationResult[Seats], Resolve(how_many)]) -> str:
    """Reserve seats for a show (asks the user how many, through a resolver)."""
    calls["reserve"] += 1
    data = answer.data.model_dump() if answer.action == "accept" else None
    return json.dumps({"show": show, "action": answer.action, "data": data, "calls": calls})


def serve_http(port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(stateless_http=True, json_response=True)
    uv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    original = uv.startup

    async def startup(sockets: Any = None) -> None:
        await original(sockets)
        print("listening", file=sys.stderr, flush=True)

    uv.startup = startup  # type: ignore[method-assign]
    uv.run()


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        serve_http(int(sys.argv[2]))
    else:
        server.run("stdio")
