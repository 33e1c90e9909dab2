"""The unified test format's structure as a JSON schema (draft 7), written from the format's
text (``../shared/reference/unified-test-format.md``, "Test Format" and "Common Options"),
checked with the ``jsonschema`` library.

PyMongo's source distribution does not ship the format's own ``schema-1.x.json``; the format's
``invalid`` files each break one rule written here, and every file of every directory run must
conform. The runner refuses a file that does not, before anything runs.
"""
import functools



def obj(props, required=(), extra=False, **kw):
    """An object with these fields only (the format lists every field of every object)."""
    d = {"type": "object", "properties": props, "additionalProperties": extra}
    if required:
        d["required"] = list(required)
    d.update(kw)
    return d


def arr(items, min_items=1):
    """An array; "one or more" in the format's text is ``minItems`` 1."""
    d = {"type": "array", "items": items}
    if min_items:
        d["minItems"] = min_items
    return d


def ref(name):
    return {"$ref": f"#/definitions/{name}"}


STR = {"type": "string"}
BOOL = {"type": "boolean"}
INT = {"type": "integer"}
OBJ = {"type": "object"}
EMPTY = obj({})
# Version String: major, major.minor or major.minor.patch.
VERSION = {"type": "string", "pattern": "^[0-9]+(\\.[0-9]+){0,2}$"}

LEVELS = ["off", "emergency", "alert", "critical", "error", "warn", "notice", "info",
          "debug", "trace"]
COMPONENTS = ["command", "topology", "serverSelection", "connection"]
COMMAND_EVENTS = ["commandStartedEvent", "commandSucceededEvent", "commandFailedEvent"]
CMAP_EVENTS = ["poolCreatedEvent", "poolReadyEvent", "poolClearedEvent", "poolClosedEvent",
               "connectionCreatedEvent", "connectionReadyEvent", "connectionClosedEvent",
               "connectionCheckOutStartedEvent", "connectionCheckOutFailedEvent",
               "connectionCheckedOutEvent", "connectionCheckedInEvent"]
SDAM_EVENTS = ["serverDescriptionChangedEvent", "serverHeartbeatStartedEvent",
               "serverHeartbeatSucceededEvent", "serverHeartbeatFailedEvent",
               "topologyDescriptionChangedEvent", "topologyOpeningEvent",
               "topologyClosedEvent"]
SERVER_TYPES = ["Standalone", "Mongos", "PossiblePrimary", "RSPrimary", "RSSecondary",
                "RSOther", "RSArbiter", "RSGhost", "LoadBalancer", "Unknown"]

def kms(props):
    """One KMS provider's credentials (clientEncryptionOpts.kmsProviders)."""
    return {"type": "object", "properties": {k: {} for k in props},
            "additionalProperties": False}


KMS_FIELDS = {"aws": ["accessKeyId", "secretAccessKey", "sessionToken"],
             "azure": ["tenantId", "clientId", "clientSecret", "identityPlatformEndpoint"],
             "gcp": ["email", "privateKey", "endpoint"],
             "kmip": ["endpoint"], "local": ["key"]}
kms_props, kms_patterns = {}, {}
for name, fields in KMS_FIELDS.items():
    kms_props[name] = kms(fields)
    # Named providers: "aws:name1".
    kms_patterns[f"^{name}:[a-zA-Z0-9_]+$"] = kms(fields)

command_common = {"commandName": STR, "databaseName": STR, "hasServiceId": BOOL,
                  "hasServerConnectionId": BOOL}
server_description = obj({"type": {"type": "string", "enum": SERVER_TYPES}})
heartbeat = obj({"awaited": BOOL})
topology_description = obj({"type": STR}, extra=True)

definitions = {
    "runOnRequirement": obj({
        "minServerVersion": VERSION, "maxServerVersion": VERSION,
        "topologies": arr({"type": "string", "enum": ["single", "replicaset", "sharded",
                                                      "sharded-replicaset", "load-balanced"]}),
        "serverless": {"type": "string", "enum": ["require", "forbid", "allow"]},
        "serverParameters": OBJ, "auth": BOOL, "authMechanism": STR,
        "csfle": {"oneOf": [BOOL, obj({"minLibmongocryptVersion": VERSION})]},
    }, minProperties=1),
    "entity": {"type": "object", "minProperties": 1, "maxProperties": 1,
               "additionalProperties": False, "properties": {
        "client": obj({
            "id": STR, "uriOptions": OBJ, "useMultipleMongoses": BOOL,
            "observeEvents": arr({"type": "string",
                                  "enum": COMMAND_EVENTS + CMAP_EVENTS + SDAM_EVENTS}),
            "ignoreCommandMonitoringEvents": arr(STR),
            "storeEventsAsEntities": arr(ref("storeEventsAsEntity")),
            "observeLogMessages": {"type": "object", "minProperties": 1,
                                   "additionalProperties": False,
                                   "properties": {c: ref("logSeverityLevel")
                                                  for c in COMPONENTS}},
            "observeTracingMessages": OBJ,
            "serverApi": ref("serverApi"), "observeSensitiveCommands": BOOL,
            "autoEncryptOpts": OBJ, "awaitMinPoolSizeMS": INT,
        }, required=["id"]),
        "clientEncryption": obj({"id": STR, "clientEncryptionOpts": ref("clientEncryptionOpts")},
                                required=["id", "clientEncryptionOpts"]),
        "database": obj({"id": STR, "client": STR, "databaseName": STR,
                         "databaseOptions": ref("collectionOrDatabaseOptions")},
                        required=["id", "client", "databaseName"]),
        "collection": obj({"id": STR, "database": STR, "collectionName": STR,
                           "collectionOptions": ref("collectionOrDatabaseOptions")},
                          required=["id", "database", "collectionName"]),
        "session": obj({"id": STR, "client": STR, "sessionOptions": OBJ},
                       required=["id", "client"]),
        "bucket": obj({"id": STR, "database": STR, "bucketOptions": OBJ},
                      required=["id", "database"]),
        "stream": obj({"id": STR, "hexBytes": {"type": "string",
                                               "pattern": "^([0-9A-Fa-f]{2})*$"}},
                      required=["id", "hexBytes"]),
        "thread": obj({"id": STR}, required=["id"]),
    }},
    "logSeverityLevel": {"type": "string", "enum": LEVELS},
    "storeEventsAsEntity": obj({"id": STR, "events": arr({"type": "string"})},
                               required=["id", "events"]),
    "serverApi": obj({"version": STR, "strict": BOOL, "deprecationErrors": BOOL},
                     required=["version"]),
    "clientEncryptionOpts": obj({
        "keyVaultClient": STR, "keyVaultNamespace": STR, "keyExpirationMS": INT,
        "kmsProviders": {"type": "object", "properties": kms_props,
                         "patternProperties": kms_patterns, "additionalProperties": False},
    }, required=["keyVaultClient", "keyVaultNamespace", "kmsProviders"]),
    "collectionData": obj({"collectionName": STR, "databaseName": STR, "createOptions": OBJ,
                           "documents": arr(OBJ, 0)},
                          required=["collectionName", "databaseName", "documents"]),
    "collectionOrDatabaseOptions": obj({"readConcern": OBJ, "readPreference": OBJ,
                                        "writeConcern": OBJ, "timeoutMS": INT}),
    "test": obj({
        "description": STR, "runOnRequirements": arr(ref("runOnRequirement")),
        "skipReason": STR, "operations": arr(ref("operation"), 0),
        "expectEvents": arr(ref("expectedEventsForClient")),
        "expectLogMessages": arr(ref("expectedLogMessagesForClient")),
        "expectTracingMessages": OBJ, "outcome": arr(ref("collectionData")),
    }, required=["description", "operations"]),
    "operation": {**obj({
        "name": STR, "object": STR, "arguments": OBJ, "ignoreResultAndError": BOOL,
        "expectError": ref("expectedError"), "expectResult": {},
        "saveResultAsEntity": STR, "expectEvents": arr(ref("expectedEventsForClient")),
    }, required=["name", "object"]), "allOf": [
        # expectError, expectResult and saveResultAsEntity exclude one another, and
        # ignoreResultAndError excludes all three.
        {"not": {"required": ["expectError", "expectResult"]}},
        {"not": {"required": ["expectError", "saveResultAsEntity"]}},
        {"not": {"required": ["ignoreResultAndError", "expectError"]}},
        {"not": {"required": ["ignoreResultAndError", "expectResult"]}},
        {"not": {"required": ["ignoreResultAndError", "saveResultAsEntity"]}},
    ]},
    "expectedError": obj({
        "isError": {"type": "boolean", "const": True}, "isClientError": BOOL,
        "isTimeoutError": BOOL, "errorContains": STR, "errorCode": INT,
        "errorCodeName": STR, "errorLabelsContain": arr(STR), "errorLabelsOmit": arr(STR),
        "writeErrors": OBJ, "writeConcernErrors": arr(OBJ), "errorResponse": OBJ,
        "expectResult": {},
    }, minProperties=1),
    "expectedEventsForClient": {**obj({
        "client": STR, "eventType": {"type": "string", "enum": ["command", "cmap", "sdam"]},
        "events": {"type": "array"}, "ignoreExtraEvents": BOOL,
    }, required=["client", "events"]), "oneOf": [
        {"properties": {"eventType": {"const": "command"},
                        "events": {"items": ref("expectedCommandEvent")}},
         "required": ["eventType"]},
        {"properties": {"eventType": {"const": "cmap"},
                        "events": {"items": ref("expectedCmapEvent")}},
         "required": ["eventType"]},
        {"properties": {"eventType": {"const": "sdam"},
                        "events": {"items": ref("expectedSdamEvent")}},
         "required": ["eventType"]},
        # Without eventType the events are command events.
        {"properties": {"events": {"items": ref("expectedCommandEvent")}},
         "not": {"required": ["eventType"]}},
    ]},
    "expectedCommandEvent": {"type": "object", "minProperties": 1, "maxProperties": 1,
                             "additionalProperties": False, "properties": {
        "commandStartedEvent": obj({"command": OBJ, **command_common}),
        "commandSucceededEvent": obj({"reply": OBJ, **command_common}),
        "commandFailedEvent": obj(dict(command_common)),
    }},
    "expectedCmapEvent": {"type": "object", "minProperties": 1, "maxProperties": 1,
                          "additionalProperties": False, "properties": {
        "poolCreatedEvent": EMPTY, "poolReadyEvent": EMPTY,
        "poolClearedEvent": obj({"hasServiceId": BOOL, "interruptInUseConnections": BOOL}),
        "poolClosedEvent": EMPTY, "connectionCreatedEvent": EMPTY,
        "connectionReadyEvent": EMPTY, "connectionClosedEvent": obj({"reason": STR}),
        "connectionCheckOutStartedEvent": EMPTY,
        "connectionCheckOutFailedEvent": obj({"reason": STR}),
        "connectionCheckedOutEvent": EMPTY, "connectionCheckedInEvent": EMPTY,
    }},
    "expectedSdamEvent": {"type": "object", "minProperties": 1, "maxProperties": 1,
                          "additionalProperties": False, "properties": {
        "serverDescriptionChangedEvent": obj({"previousDescription": server_description,
                                              "newDescription": server_description}),
        "serverHeartbeatStartedEvent": heartbeat, "serverHeartbeatSucceededEvent": heartbeat,
        "serverHeartbeatFailedEvent": heartbeat,
        "topologyDescriptionChangedEvent": obj({"previousDescription": topology_description,
                                                "newDescription": topology_description}),
        "topologyOpeningEvent": EMPTY, "topologyClosedEvent": EMPTY,
    }},
    "expectedLogMessagesForClient": obj({
        "client": STR, "messages": arr(ref("expectedLogMessage"), 0),
        "ignoreMessages": arr(ref("expectedLogMessage"), 0), "ignoreExtraMessages": BOOL,
    }, required=["client", "messages"]),
    "expectedLogMessage": obj({
        "level": ref("logSeverityLevel"), "component": {"type": "string", "enum": COMPONENTS},
        "failureIsRedacted": BOOL, "data": OBJ,
    }, required=["level", "component", "data"]),
}

SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Unified Test Format, schema 1 (written by singlemongo from the format's text)",
    "type": "object",
    "additionalProperties": False,
    "required": ["description", "schemaVersion", "tests"],
    "properties": {
        "description": STR,
        "schemaVersion": VERSION,
        "runOnRequirements": arr(ref("runOnRequirement")),
        "createEntities": arr(ref("entity")),
        "initialData": arr(ref("collectionData")),
        "tests": arr(ref("test")),
        "_yamlAnchors": OBJ,
    },
    "definitions": definitions,
}


@functools.lru_cache(maxsize=None)
def _validator():
    import jsonschema  # the test extra; only the unified runner needs it
    jsonschema.Draft7Validator.check_schema(SCHEMA)
    return jsonschema.Draft7Validator(SCHEMA)


def problems(doc):
    """Where ``doc`` breaks the format, one line per rule broken (empty when it conforms)."""
    found = []
    for error in sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
        found.append(f"{where}: {error.message[:200]}")
    return found
