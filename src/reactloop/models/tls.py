"""One TLS context per process for the SDKs' HTTP clients.

Building a context loads the CA bundle, about 17 ms of CPU; an adapter is built per agent, and an
evaluation builds one per thread and episode setting, so each building its own would cost more
than the model calls it makes against a local server. The context honours ``SSL_CERT_FILE`` and
``SSL_CERT_DIR`` as read when the first adapter is made.
"""

from __future__ import annotations

import functools
import ssl
from typing import Any


@functools.cache
def shared_tls_context(http_library: Any) -> ssl.SSLContext:
    """The process's TLS context made by ``http_library`` (the SDKs' ``httpx2``)."""
    context: ssl.SSLContext = http_library.create_ssl_context()
    return context
