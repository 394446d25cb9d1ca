"""One TLS context per process for the SDKs' HTTP clients.

Building a context loads the CA bundle, about 17 ms of CPU; an adapter is built per agent, and an
evaluation builds one per thread and episode setting, so each building its own would cost more
than the model calls it makes against a local server. The context honours ``SSL_CERT_FILE`` and
``SSL_CERT_DIR`` as read when the first adapter is made. It is made under a lock: an eval's
worker starts its episodes on hundreds of threads at once, and each of them, finding no context
yet, made its own (128 threads made 128, 7 s of CPU; issue 40).
"""

from __future__ import annotations

import ssl
import threading
from typing import Any

_made: dict[int, ssl.SSLContext] = {}
_making = threading.Lock()


def shared_tls_context(http_library: Any) -> ssl.SSLContext:
    """The process's TLS context made by ``http_library`` (the SDKs' ``httpx2``)."""
    made = _made.get(id(http_library))
    if made is None:
        with _making:
            made = _made.get(id(http_library))
            if made is None:
                made = http_library.create_ssl_context()
                _made[id(http_library)] = made
    return made
