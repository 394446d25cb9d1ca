"""``stdio_client``: the SDK's stdio transport, with a reader that takes each line in linear time
and names a line that is not UTF-8.

The SDK's reader joins what it holds of a line with every chunk it reads
(``(buffer + chunk).split("\\n")``): a 30 MB answer, which comes in chunks of 64 KiB at most, is
copied and scanned some 460 times (about 30 s). And a line that is not UTF-8 ends its reader
with a ``UnicodeDecodeError``, so the call fails with a generic "did not answer". Here the
chunks of a line are kept in a list and joined once, at its end; a line that is not UTF-8 is
handed to the session as ``NotUTF8``, which the error quotes (``session._garbage_text``). A
tool listing nested too deep for the SDK's decoder is answered at once with an error that
names the tool (``listing.deep_listing``), where the SDK would drop it and the listing wait
out its limit.

Everything else is the SDK's own: the process (in a process group of its own), the writer, the
shutdown sequence of the spec. Those pieces are private to the SDK: with an SDK that lacks
them, its own ``stdio_client`` is used, as it is.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any, TextIO

from reactloop.support.json_decode import nesting_exceeds
from reactloop.tools.mcp.listing import LISTING_DEPTH, deep_listing, too_deep

Refused = Callable[[str], None]
INTERNAL_ERROR = -32603  # JSON-RPC's code for an error of the answering side


class NotUTF8(ValueError):
    """A line from the server that is not UTF-8; ``line`` holds its bytes."""

    def __init__(self, line: bytes) -> None:
        super().__init__(f"a line that is not UTF-8: {line[:80]!r}")
        self.line = line


async def lines_of(stream: Any) -> AsyncIterator[str | NotUTF8]:
    """The lines of a byte stream, each decoded once (a trailing unfinished line is dropped,
    as the SDK drops it)."""
    import anyio

    pending: list[bytes] = []
    while True:
        try:
            chunk: bytes = await stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            return
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            pending.append(chunk[start:end])
            line = b"".join(pending)
            pending = []
            start = end + 1
            try:
                text: str | NotUTF8 = line.decode("utf-8")
            except UnicodeDecodeError:
                text = NotUTF8(line)
            yield text
        if start < len(chunk):
            pending.append(chunk[start:])


def _parsed(sdk: Any, line: str, refused: Refused | None) -> Any:
    """The SDK's message of ``line``; a tool listing with a schema too deep (``deep_listing``,
    which reads what no decoder can) is answered for the server with an error naming the
    tool, at once, and ``refused`` is told."""
    if refused is not None and '"tools"' in line and nesting_exceeds(line, LISTING_DEPTH):
        found = deep_listing(line)
        if found is not None:
            ident, name = found
            message = str(too_deep(name))
            refused(message)
            error = {"code": INTERNAL_ERROR, "message": message}
            line = json.dumps({"jsonrpc": "2.0", "id": ident, "error": error})
    return sdk._parse_line(line)


def stdio_client(
    parameters: Any, errlog: TextIO, refused: Refused | None = None
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The transport for ``parameters`` (the SDK's ``StdioServerParameters``); ``refused`` is
    told why a tool listing was refused before the SDK read it (``_parsed``)."""
    from mcp.client import stdio as sdk

    needed = (
        "_get_executable_command",
        "_create_platform_compatible_process",
        "_parse_line",
        "_drain_stdout",
        "_stop_server_process",
        "_aclose_all",
        "get_default_environment",
    )
    if not all(hasattr(sdk, name) for name in needed):
        return sdk.stdio_client(parameters, errlog=errlog)
    return _linear_stdio(sdk, parameters, errlog, refused)


@contextlib.asynccontextmanager
async def _linear_stdio(
    sdk: Any, server: Any, errlog: TextIO, refused: Refused | None
) -> AsyncIterator[Any]:
    import anyio
    import anyio.lowlevel
    from mcp.shared.message import SessionMessage

    command = await sdk._get_executable_command(server.command)
    process = await sdk._create_platform_compatible_process(
        command=command,
        args=server.args,
        env=sdk.get_default_environment() | (server.env or {}),
        errlog=errlog,
        cwd=server.cwd,
    )
    # No awaits until the task group is entered (the SDK's rule: a cancellation in the gap
    # would leak the live process).
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        with contextlib.suppress(
            anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError
        ):
            async with read_writer:
                try:
                    async for line in lines_of(process.stdout):
                        message = line if isinstance(line, NotUTF8) else _parsed(sdk, line, refused)
                        try:
                            await read_writer.send(message)
                        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                            return  # the session is gone
                finally:
                    await sdk._drain_stdout(process)

    async def stdin_writer() -> None:
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(
                        by_alias=True, exclude_unset=True
                    )
                    data = (text + "\n").encode(server.encoding, server.encoding_error_handler)
                    await process.stdin.send(data)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(0.5):  # the SDK's flush limit for the writer
            await writer_done.wait()
        await sdk._stop_server_process(process)
        await sdk._aclose_all(read_stream, write_stream, read_writer, write_reader)
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await shutdown()
            group.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()
