"""``$changeStreamSplitLargeEvent`` (MongoDB 7.0, and 6.0.9): a change event over 16 MiB is
returned as fragments, each with ``splitEvent: {fragment, of}`` and its own resume token,
holding the event's top-level fields in order. Resuming from a fragment's token resumes after
the whole event (a server resumes at the next fragment)."""
import bson

from singlemongo.testing.query.codes import CommandError

STAGE = "$changeStreamSplitLargeEvent"
LIMIT = 16 * 1024 * 1024
FRAGMENT = 0x10  # a fragment's token kind is FRAGMENT + its number


def take_stage(pipeline):
    """(the pipeline without the stage, whether it asked for splitting): it must be last."""
    at = [i for i, stage in enumerate(pipeline) if isinstance(stage, dict) and STAGE in stage]
    if not at:
        return pipeline, False
    if at != [len(pipeline) - 1]:
        raise CommandError(7182802, f"{STAGE} must be the last stage of the pipeline")
    if pipeline[-1][STAGE] != {}:
        raise CommandError(7182801, f"{STAGE} takes an empty document")
    return pipeline[:-1], True


def fragments(event, token):
    """The event as it is returned: itself, or its fragments when it is over LIMIT.
    ``token(i)`` is the resume token of fragment ``i``."""
    if len(bson.encode(event)) <= LIMIT:
        return [event]
    parts, current, size = [], {}, 0
    room = LIMIT - 1024  # _id, splitEvent and the document's own framing
    for key, value in event.items():
        if key == "_id":
            continue
        field = len(bson.encode({key: value}))
        if current and size + field > room:
            parts.append(current)
            current, size = {}, 0
        current[key] = value
        size += field
    parts.append(current)
    return [{"_id": token(i) if i < len(parts) else event["_id"],
             "splitEvent": {"fragment": i, "of": len(parts)}, **part}
            for i, part in enumerate(parts, 1)]
