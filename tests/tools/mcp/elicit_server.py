"""An MCP server (stdio, the SDK's ``MCPServer``) whose ``book`` tool asks the user a question
mid-call (elicitation: how many seats, with a default) and answers with what it was told.

    python elicit_server.py
"""

from __future__ import annotations

import json

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from pydantic import BaseModel, Field

server = MCPServer("elicit")


class Seats(BaseModel):
    seats: int = Field(default=2, description="How many seats")
    note: str = Field(default="", description="Anything to add")


@server.tool()
async def book(show: str, ctx: Context) -> str:
    """Book seats for a show (asks the user how many)."""
    try:
        answer = await ctx.elicit(f"How many seats for {show}?", Seats)
    except Exception as exc:  # a client that cannot be asked refuses the request
        return json.dumps({"show": show, "refused": str(exc)})
    data = answer.data.model_dump() if answer.action == "accept" else None
    return json.dumps({"show": show, "action": answer.action, "data": data})


if __name__ == "__main__":
    server.run("stdio")
