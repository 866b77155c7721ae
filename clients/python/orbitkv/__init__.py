"""orbitkv-client: the Python client of the OrbitKV Manager HTTP API v1 (standard library only).

See docs/engines.md for how an engine uses it."""

from ._ops import Limits
from . import admission
from .admission import AdmissionRefused, Granted, Refused, Registered, Returned
from ._protocol import MISS, TOO_SMALL
from .aio import AsyncClient
from .client import Client
from .errors import (BadRequest, ConnectionFailed, OrbitKVError, Overloaded, ServerError, Timeout, TooLarge,
                     Unauthorized, Unavailable)
from .keys import KEY_MAPPING, key_hex, map_key
from .stops import MISS as STOP_MISS, RETRYABLE as STOP_RETRYABLE, STOP_CLASSES, stop_class

__all__ = ["Client", "AsyncClient", "Limits", "OrbitKVError", "BadRequest", "Unauthorized", "TooLarge", "Overloaded",
           "Unavailable", "ServerError", "ConnectionFailed", "Timeout", "map_key", "key_hex", "KEY_MAPPING", "MISS",
           "TOO_SMALL", "STOP_CLASSES", "STOP_MISS", "STOP_RETRYABLE", "stop_class", "admission", "AdmissionRefused",
           "Granted", "Refused", "Registered", "Returned"]
__version__ = "0.1.0"
