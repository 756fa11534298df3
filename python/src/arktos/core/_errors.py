"""The Arktos error registry: code -> name -> exception class.

``REGISTRY`` is a copy of ``testdata/errors.json`` (tests/test_errors_registry.py
checks that they agree). Codes are stable: never renumber, only append.

Every exception a server error turns into is an :class:`ArktosError` *and* the
Python exception the registry names, so ``except KeyError`` catches an unknown
array just as ``except ak.UnknownArrayError`` does::

    >>> try:
    ...     ak.attach("no-such-array")
    ... except KeyError as err:
    ...     print(err.code, err.name)
    9 UNKNOWN_ARRAY

Clients map codes to exceptions and never parse messages.
"""

from __future__ import annotations

from typing import Any, ClassVar, NamedTuple

# Only the exception classes: `from ._errors import *` in arktos/__init__.py.
__all__ = [
    "ArktosError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "AuthFailedError",
    "FrameCountError",
    "FrameTooLargeError",
    "IndexOutOfRangeError",
    "InternalError",
    "LocaleFailedError",
    "InvalidDataError",
    "MalformedRequestError",
    "MissingArgumentError",
    "NameInUseError",
    "NotDistributedError",
    "OverflowArktosError",
    "OutOfMemoryError",
    "PayloadLengthError",
    "RestoringError",
    "CanceledError",
    "ShuttingDownError",
    "TooManyStreamsError",
    "UnknownArrayError",
    "UnknownCommandError",
    "UnsupportedDtypeError",
    "UnsupportedVersionError",
]


class ErrorSpec(NamedTuple):
    """One registry entry, as in testdata/errors.json."""

    code: int
    name: str
    python: str
    meaning: str


REGISTRY: tuple[ErrorSpec, ...] = (
    ErrorSpec(1, "INTERNAL", "RuntimeError", "a bug in the server (a recovered panic); the server keeps serving"),
    ErrorSpec(2, "MALFORMED_REQUEST", "ValueError", "the header frame is not a msgpack map with v, id, token, cmd and args of the right types"),
    ErrorSpec(3, "UNSUPPORTED_VERSION", "ValueError", "the request's protocol version is not one the server speaks"),
    ErrorSpec(4, "AUTH_FAILED", "PermissionError", "the server requires a token and the request's token is missing or wrong"),
    ErrorSpec(5, "UNKNOWN_COMMAND", "ValueError", "cmd names no command"),
    ErrorSpec(6, "MISSING_ARGUMENT", "TypeError", "a required argument is absent"),
    ErrorSpec(7, "ARGUMENT_TYPE", "TypeError", "an argument has the wrong msgpack type"),
    ErrorSpec(8, "ARGUMENT_VALUE", "ValueError", "an argument has the right type but a value out of its domain, or is not an argument of the command"),
    ErrorSpec(9, "UNKNOWN_ARRAY", "KeyError", "no array is stored under that name"),
    ErrorSpec(10, "UNSUPPORTED_DTYPE", "TypeError", "the dtype is not one of the supported dtypes"),
    ErrorSpec(11, "PAYLOAD_LENGTH", "ValueError", "the payload frames do not hold size x itemsize bytes"),
    ErrorSpec(12, "FRAME_COUNT", "ValueError", "the request carries more or fewer payload frames than the command takes"),
    ErrorSpec(13, "FRAME_TOO_LARGE", "ValueError", "a payload frame is larger than the frame size allowed"),
    ErrorSpec(14, "OUT_OF_MEMORY", "MemoryError", "storing the result would exceed the server's --max-memory"),
    ErrorSpec(15, "NAME_IN_USE", "ValueError", "an array with that name already exists"),
    ErrorSpec(16, "INDEX_OUT_OF_RANGE", "IndexError", "an index or range lies outside the array"),
    ErrorSpec(17, "INVALID_DATA", "ValueError", "payload bytes are not valid for the dtype (e.g. a bool byte other than 0 or 1)"),
    ErrorSpec(18, "SHUTTING_DOWN", "ConnectionError", "the server is shutting down and takes no new work"),
    ErrorSpec(19, "OVERFLOW", "OverflowError", "a Python integer does not fit the dtype an operation converts it to (numpy 2 raises OverflowError)"),
    ErrorSpec(20, "RESTORING", "ConnectionError", "the server is restoring its --checkpoint at start-up; requests other than get_config, stats and shutdown run once it has (clients wait for it when they connect)"),
    ErrorSpec(21, "TOO_MANY_STREAMS", "ConnectionError", "the server holds --max-streams bulk streams and request lanes; clients fall back to ZeroMQ and try again later"),
    ErrorSpec(22, "CANCELED", "TimeoutError", "the request was cancelled (a client's cancel or Ctrl-C, or --max-request-time) before it stored anything; every stored array is as it was"),
    ErrorSpec(23, "NOT_DISTRIBUTED", "NotImplementedError", "the command does not run yet on a server whose arrays are spread over several locales (--locales); docs/locales.md lists those that do"),
    ErrorSpec(24, "LOCALE_FAILED", "ConnectionError", "a locale the command needs did not answer (its process died or its link was lost); the other locales keep their arrays, and nothing half-made is stored"),
)

_SPEC_BY_NAME: dict[str, ErrorSpec] = {spec.name: spec for spec in REGISTRY}
_CLASS_BY_CODE: dict[int, type[ArktosError]] = {}


class ArktosError(Exception):
    """Base of every error an Arktos server reports.

    Attributes: ``code`` (stable number from the registry), ``name`` (such as
    ``"UNKNOWN_ARRAY"``) and ``message`` (what was wrong and how to fix it).
    Subclasses also derive from the Python exception the registry names.

    >>> issubclass(ak.UnknownArrayError, KeyError)
    True
    """

    code: int = 0
    name: str = ""
    registry_name: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = _SPEC_BY_NAME[cls.registry_name]
        cls.code, cls.name = spec.code, spec.name
        _CLASS_BY_CODE[spec.code] = cls

    def __init__(self, message: str, *, code: int | None = None, name: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if name is not None:
            self.name = name

    def __str__(self) -> str:
        # KeyError would otherwise print the message in quotes.
        return f"{self.message} [{self.name}]" if self.name else self.message


def error_for(code: int, name: str, message: str) -> ArktosError:
    """Build the exception for an error reply (code, name, message).

    An unknown code (a server newer than this client) gives a plain
    ArktosError that still carries the code and name.

    >>> error_for(9, "UNKNOWN_ARRAY", "no array named 'x'")
    UnknownArrayError("no array named 'x'")
    """
    cls = _CLASS_BY_CODE.get(code)
    if cls is None:
        return ArktosError(message, code=code, name=name)
    return cls(message)


class InternalError(ArktosError, RuntimeError):
    """INTERNAL: a bug in the server; it keeps serving."""

    registry_name = "INTERNAL"


class MalformedRequestError(ArktosError, ValueError):
    """MALFORMED_REQUEST: the header frame could not be read."""

    registry_name = "MALFORMED_REQUEST"


class UnsupportedVersionError(ArktosError, ValueError):
    """UNSUPPORTED_VERSION: the server does not speak this protocol version."""

    registry_name = "UNSUPPORTED_VERSION"


class AuthFailedError(ArktosError, PermissionError):
    """AUTH_FAILED: the token is missing or wrong."""

    registry_name = "AUTH_FAILED"


class UnknownCommandError(ArktosError, ValueError):
    """UNKNOWN_COMMAND: no such command."""

    registry_name = "UNKNOWN_COMMAND"


class MissingArgumentError(ArktosError, TypeError):
    """MISSING_ARGUMENT: a required argument is absent."""

    registry_name = "MISSING_ARGUMENT"


class ArgumentTypeError(ArktosError, TypeError):
    """ARGUMENT_TYPE: an argument has the wrong type."""

    registry_name = "ARGUMENT_TYPE"


class ArgumentValueError(ArktosError, ValueError):
    """ARGUMENT_VALUE: an argument's value is out of range, or unknown."""

    registry_name = "ARGUMENT_VALUE"


class UnknownArrayError(ArktosError, KeyError):
    """UNKNOWN_ARRAY: no array is stored under that name."""

    registry_name = "UNKNOWN_ARRAY"


class UnsupportedDtypeError(ArktosError, TypeError):
    """UNSUPPORTED_DTYPE: the server cannot store that dtype."""

    registry_name = "UNSUPPORTED_DTYPE"


class PayloadLengthError(ArktosError, ValueError):
    """PAYLOAD_LENGTH: the payload does not hold size x itemsize bytes."""

    registry_name = "PAYLOAD_LENGTH"


class FrameCountError(ArktosError, ValueError):
    """FRAME_COUNT: too many or too few payload frames."""

    registry_name = "FRAME_COUNT"


class FrameTooLargeError(ArktosError, ValueError):
    """FRAME_TOO_LARGE: a payload frame exceeds the allowed frame size."""

    registry_name = "FRAME_TOO_LARGE"


class OutOfMemoryError(ArktosError, MemoryError):
    """OUT_OF_MEMORY: the result would exceed the server's --max-memory."""

    registry_name = "OUT_OF_MEMORY"


class NameInUseError(ArktosError, ValueError):
    """NAME_IN_USE: an array with that name already exists."""

    registry_name = "NAME_IN_USE"


class IndexOutOfRangeError(ArktosError, IndexError):
    """INDEX_OUT_OF_RANGE: an index or range lies outside the array."""

    registry_name = "INDEX_OUT_OF_RANGE"


class InvalidDataError(ArktosError, ValueError):
    """INVALID_DATA: payload bytes are not valid for the dtype."""

    registry_name = "INVALID_DATA"


class ShuttingDownError(ArktosError, ConnectionError):
    """SHUTTING_DOWN: the server is shutting down."""

    registry_name = "SHUTTING_DOWN"


class OverflowArktosError(ArktosError, OverflowError):
    """OVERFLOW: a Python integer does not fit the dtype of the operation."""

    registry_name = "OVERFLOW"


class RestoringError(ArktosError, ConnectionError):
    """RESTORING: the server is restoring its --checkpoint; retry once it has."""

    registry_name = "RESTORING"


class TooManyStreamsError(ArktosError, ConnectionError):
    """TOO_MANY_STREAMS: the server holds --max-streams streams and lanes."""

    registry_name = "TOO_MANY_STREAMS"


class CanceledError(ArktosError, TimeoutError):
    """CANCELED: the request was cancelled (ak.cancel(), Ctrl-C, or the server's
    --max-request-time) before it stored anything; stored arrays are as they were."""

    registry_name = "CANCELED"


class NotDistributedError(ArktosError, NotImplementedError):
    """NOT_DISTRIBUTED: the command does not run yet across several locales."""

    registry_name = "NOT_DISTRIBUTED"


class LocaleFailedError(ArktosError, ConnectionError):
    """LOCALE_FAILED: a locale the command needs did not answer; the others keep their arrays."""

    registry_name = "LOCALE_FAILED"
