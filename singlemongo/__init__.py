"""singlemongo: a MongoDB driver for short-lived, single-threaded Python programs."""

__version__ = "0.1.0"

from .errors import (ConfigurationError, ConnectionFailure, InvalidURI, OperationFailure,
                     ServerSelectionError, SingleMongoError, SingleMongoWarning)
from .client_options import ClientOptions, client_options
from .selection.read_preference import ReadPreference
from .client import MongoClient

__all__ = ["__version__", "MongoClient", "ClientOptions", "client_options", "ConfigurationError",
           "ConnectionFailure", "InvalidURI", "OperationFailure", "ReadPreference",
           "ServerSelectionError", "SingleMongoError", "SingleMongoWarning"]
