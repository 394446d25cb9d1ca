"""OAuth for a remote MCP server: the SDK's ``OAuthClientProvider`` (an ``httpx2.Auth``).

A URL server gets it unless its entry says ``"auth": "none"``, or, with the default
``"auth": "auto"``, its headers already give an ``Authorization`` (a token from the
environment: the simple path). The provider does nothing until the server answers 401 (or 403
``insufficient_scope``); then it discovers the server's protected resource metadata and its
authorization server's metadata, registers reactloop (a client ID metadata document when
``oauth.clientMetadataUrl`` is given and the server takes one, else dynamic registration,
unless ``oauth.clientId`` names a pre-registered client), and gets a token by the
authorization code grant with PKCE through a loopback redirect (``oauth_redirect.py``).
``"grant": "client_credentials"`` gets one with the client's secret (``clientSecret``) or a
JWT signed with its key (``privateKey``), no user involved. Tokens and the registration are
kept per server in the user's config folder (``token_store.py``) and refreshed when they
expire.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping
from typing import Any

from reactloop.tools.mcp import token_store
from reactloop.tools.mcp.config import ServerConfig
from reactloop.tools.mcp.oauth_redirect import AuthorizationRefused, LoopbackRedirect

CLIENT_NAME = "reactloop"


def uses_oauth(config: ServerConfig) -> bool:
    if config.url is None or config.auth == "none":
        return False
    given = any(key.lower() == "authorization" for key in config.headers)
    return config.auth == "oauth" or not given


def oauth_for(
    config: ServerConfig, pause: Callable[[float], None]
) -> tuple[Any, LoopbackRedirect | None]:
    """The ``httpx2.Auth`` for this server (None without OAuth), and its loopback listener
    (to close when the session ends), if it has one."""
    if not uses_oauth(config):
        return None, None
    assert config.url is not None
    settings = config.oauth
    if settings.get("grant") == "client_credentials":
        return _client_credentials(config.url, settings), None
    return _authorization_code(config, settings, pause)


def _client_credentials(url: str, settings: Mapping[str, str]) -> Any:
    """A machine client's provider; without ``issuer`` the server's advertised authorization
    server gets the credentials (the SDK's deprecation warning is not shown: docs/mcp.md)."""
    from mcp.client.auth.extensions.client_credentials import (
        ClientCredentialsOAuthProvider,
        PrivateKeyJWTOAuthProvider,
        SignedJWTParameters,
    )

    client_id, scope, issuer = settings["clientId"], settings.get("scope"), settings.get("issuer")
    storage = token_store.ServerTokens(url)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "privateKey" in settings:
            signed = SignedJWTParameters(
                issuer=client_id,
                subject=client_id,
                signing_key=settings["privateKey"],
                signing_algorithm=settings.get("signingAlgorithm", "RS256"),
            )
            assertion = signed.create_assertion_provider()
            return PrivateKeyJWTOAuthProvider(
                url, storage, client_id, assertion, scope=scope, issuer=issuer
            )
        post = settings.get("tokenEndpointAuthMethod") == "client_secret_post"
        return ClientCredentialsOAuthProvider(
            url,
            storage,
            client_id,
            settings["clientSecret"],
            token_endpoint_auth_method="client_secret_post" if post else "client_secret_basic",
            scope=scope,
            issuer=issuer,
        )


def _authorization_code(
    config: ServerConfig, settings: Mapping[str, str], pause: Callable[[float], None]
) -> tuple[Any, LoopbackRedirect]:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientMetadata
    from pydantic import AnyUrl

    assert config.url is not None
    kept = token_store.read_entry(config.url).get("client") or {}
    listener = LoopbackRedirect(config.name, _port_of(kept), pause)
    metadata = OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[AnyUrl(listener.uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope=settings.get("scope"),
    )
    storage = token_store.ServerTokens(
        config.url,
        client=_preregistered(settings, listener.uri),
        keep_client=_port_of(kept) == listener.port,
    )
    provider = OAuthClientProvider(
        config.url,
        metadata,
        storage,
        redirect_handler=listener.redirect,
        callback_handler=listener.callback,
        client_metadata_url=settings.get("clientMetadataUrl"),
    )
    return provider, listener


def _preregistered(settings: Mapping[str, str], redirect_uri: str) -> Any:
    """The client the config names (``clientId``, ``clientSecret``), if it names one."""
    if "clientId" not in settings:
        return None
    from mcp.shared.auth import OAuthClientInformationFull
    from pydantic import AnyUrl

    secret = settings.get("clientSecret")
    method = settings.get("tokenEndpointAuthMethod")
    return OAuthClientInformationFull(
        client_id=settings["clientId"],
        client_secret=secret,
        redirect_uris=[AnyUrl(redirect_uri)],
        token_endpoint_auth_method=method or ("client_secret_basic" if secret else "none"),
    )


def _port_of(client: Mapping[str, Any]) -> int:
    """The port of a kept registration's loopback redirect (0: none kept)."""
    from urllib.parse import urlsplit

    uris = client.get("redirect_uris") or []
    if not uris or not isinstance(uris[0], str):
        return 0
    parts = urlsplit(uris[0])
    return parts.port or 0 if parts.hostname == "127.0.0.1" else 0


def oauth_failure(exc: BaseException) -> str | None:
    """What an OAuth error in ``exc`` (exception groups and causes searched) says, if any."""
    from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

    kinds = (OAuthFlowError, OAuthRegistrationError, OAuthTokenError, AuthorizationRefused)
    seen: list[BaseException] = [exc]
    while seen:
        current = seen.pop()
        if isinstance(current, kinds):
            return " ".join(str(current).split())[:300] or type(current).__name__
        if isinstance(current, BaseExceptionGroup):
            seen.extend(current.exceptions)
        for linked in (current.__cause__, current.__context__):
            if linked is not None and len(seen) < 50:
                seen.append(linked)
    return None
