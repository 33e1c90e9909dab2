"""The Stable API (versioned API spec, as ``pymongo.server_api``): ``ServerApi("1")`` makes
every command carry ``apiVersion`` (and ``apiStrict``/``apiDeprecationErrors`` when given)
and the handshake use ``hello`` over OP_MSG."""
from __future__ import annotations

from typing import Any, Optional

from singlemongo.errors import ConfigurationError


class ServerApiVersion:
    """The API versions this driver knows."""
    V1 = "1"


class ServerApi:
    """A declared server API version; it cannot be changed once given to a client."""

    __slots__ = ("_version", "_strict", "_deprecation_errors")

    def __init__(self, version: str, strict: Optional[bool] = None,
                 deprecation_errors: Optional[bool] = None) -> None:
        if version != ServerApiVersion.V1:
            raise ValueError(f"Unknown ServerApi version: {version!r} (known: "
                             f"{ServerApiVersion.V1!r})")
        for name, value in (("strict", strict), ("deprecation_errors", deprecation_errors)):
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"{name} must be True, False or None, not {value!r}")
        self._version, self._strict = version, strict
        self._deprecation_errors = deprecation_errors

    @property
    def version(self) -> str:
        """The API version declared ("1")."""
        return self._version

    @property
    def strict(self) -> Optional[bool]:
        """Whether the server refuses commands outside the declared API (None: not sent)."""
        return self._strict

    @property
    def deprecation_errors(self) -> Optional[bool]:
        """Whether the server refuses deprecated commands (None: not sent)."""
        return self._deprecation_errors

    def command_fields(self) -> dict[str, Any]:
        """The fields every command carries ("Command Syntax")."""
        fields: dict[str, Any] = {"apiVersion": self._version}
        if self._strict is not None:
            fields["apiStrict"] = self._strict
        if self._deprecation_errors is not None:
            fields["apiDeprecationErrors"] = self._deprecation_errors
        return fields

    def __repr__(self) -> str:
        return (f"ServerApi({self._version!r}, strict={self._strict!r}, "
                f"deprecation_errors={self._deprecation_errors!r})")

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ServerApi):
            return self.command_fields() == other.command_fields()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self.command_fields().items()))


def validate_server_api(value: Any) -> Optional[ServerApi]:
    """The server_api option: a ServerApi or None; TypeError naming the value otherwise."""
    if value is None or isinstance(value, ServerApi):
        return value
    raise ConfigurationError(f"server_api must be a ServerApi, not {value!r}")
