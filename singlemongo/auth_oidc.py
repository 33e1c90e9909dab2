"""MONGODB-OIDC's callback API (as ``pymongo.auth_oidc``): an application gives an
``OIDCCallback`` (machine flow) or a human callback in ``authMechanismProperties``
(``OIDC_CALLBACK``, ``OIDC_HUMAN_CALLBACK``); the driver calls its ``fetch`` with an
``OIDCCallbackContext`` when it needs a token and caches the ``OIDCCallbackResult``."""
from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import List, Optional

__all__ = ["OIDCCallback", "OIDCCallbackContext", "OIDCCallbackResult", "OIDCIdPInfo"]


@dataclass
class OIDCIdPInfo:
    """The identity provider a server names in a two-step conversation (human flow)."""
    issuer: str
    clientId: Optional[str] = field(default=None)
    requestScopes: Optional[List[str]] = field(default=None)


@dataclass
class OIDCCallbackContext:
    """What a callback is given: how long it may take, the username of the connection
    string, the callback API version (1), and for a human callback the IdP and the refresh
    token of the last result."""
    timeout_seconds: float
    username: Optional[str]
    version: int
    refresh_token: Optional[str] = field(default=None)
    idp_info: Optional[OIDCIdPInfo] = field(default=None)


@dataclass
class OIDCCallbackResult:
    """What a callback returns: an access token, its optional lifetime (not negative) and,
    from a human callback, an optional refresh token."""
    access_token: str = field(repr=False)
    expires_in_seconds: Optional[float] = field(default=None)
    refresh_token: Optional[str] = field(default=None, repr=False)


class OIDCCallback(abc.ABC):
    """Base class of an application's OIDC token callback."""

    @abc.abstractmethod
    def fetch(self, context: OIDCCallbackContext) -> OIDCCallbackResult:
        """Return a token for ``context``."""
