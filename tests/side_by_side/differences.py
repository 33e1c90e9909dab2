"""The differences from PyMongo that are by design, each with its reason (the README's
"Differences from PyMongo" lists them too). A scenario that shows one names it; the
comparison leaves out that field only."""

PER_COMMAND_RETRYABILITY = (
    "txnNumber",
    "retryable writes spec, \"Supported Write Operations\": a bulk write's eligibility is "
    "evaluated for each write command individually, so the single-document commands of a "
    "bulk that also has UpdateMany or DeleteMany carry a txnNumber and are retried; PyMongo "
    "makes the whole bulk not retryable (the spec test \"Single-document write following "
    "deleteMany is retried\" passes here)")

DIFFERENCES = [PER_COMMAND_RETRYABILITY]
