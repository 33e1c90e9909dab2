"""The package's public names, for type checkers only: ``singlemongo/__init__.py`` imports
them on first use (PEP 562), and reads this module only under ``TYPE_CHECKING``. Each line
here has its row in ``_LAZY_TEXT`` there (a test compares them)."""
from singlemongo.client import MongoClient as MongoClient
from singlemongo.client_cache import get_client as get_client
from singlemongo.collation import Collation as Collation
from singlemongo.find_and_modify import ReturnDocument as ReturnDocument
from singlemongo.cursor import CursorType as CursorType
from singlemongo.errors import AutoReconnect as AutoReconnect
from singlemongo.errors import BulkWriteError as BulkWriteError
from singlemongo.errors import ConfigurationError as ConfigurationError
from singlemongo.errors import ConnectionFailure as ConnectionFailure
from singlemongo.errors import CursorNotFound as CursorNotFound
from singlemongo.errors import DocumentTooLarge as DocumentTooLarge
from singlemongo.errors import DuplicateKeyError as DuplicateKeyError
from singlemongo.errors import ExecutionTimeout as ExecutionTimeout
from singlemongo.errors import InvalidDocument as InvalidDocument
from singlemongo.errors import InvalidName as InvalidName
from singlemongo.errors import InvalidOperation as InvalidOperation
from singlemongo.errors import InvalidURI as InvalidURI
from singlemongo.errors import NetworkTimeout as NetworkTimeout
from singlemongo.errors import NotPrimaryError as NotPrimaryError
from singlemongo.errors import OperationFailure as OperationFailure
from singlemongo.errors import PyMongoError as PyMongoError
from singlemongo.errors import ServerSelectionError as ServerSelectionError
from singlemongo.errors import ServerSelectionTimeoutError as ServerSelectionTimeoutError
from singlemongo.errors import SingleMongoError as SingleMongoError
from singlemongo.errors import SingleMongoWarning as SingleMongoWarning
from singlemongo.errors import WriteConcernError as WriteConcernError
from singlemongo.errors import WriteError as WriteError
from singlemongo.operations import DeleteMany as DeleteMany
from singlemongo.operations import DeleteOne as DeleteOne
from singlemongo.operations import IndexModel as IndexModel
from singlemongo.client_session import ClientSession as ClientSession
from singlemongo.transaction import TransactionOptions as TransactionOptions
from singlemongo.operations import InsertOne as InsertOne
from singlemongo.operations import ReplaceOne as ReplaceOne
from singlemongo.operations import UpdateMany as UpdateMany
from singlemongo.operations import UpdateOne as UpdateOne
from singlemongo.options.client_options import ClientOptions as ClientOptions
from singlemongo.options.client_options import client_options as client_options
from singlemongo.read_concern import ReadConcern as ReadConcern
from singlemongo.read_preferences import ReadPreference as ReadPreference
from singlemongo.server_api import ServerApi as ServerApi
from singlemongo.server_api import ServerApiVersion as ServerApiVersion
from singlemongo.write_concern import WriteConcern as WriteConcern
from singlemongo.drop_in import install_as_pymongo as install_as_pymongo
from singlemongo.sdam.topology_description import (
    MAX_SUPPORTED_WIRE_VERSION as MAX_SUPPORTED_WIRE_VERSION)
from singlemongo.sdam.topology_description import (
    MIN_SUPPORTED_WIRE_VERSION as MIN_SUPPORTED_WIRE_VERSION)
from singlemongo.csot import timeout as timeout
from singlemongo.driver_info import DriverInfo as DriverInfo
