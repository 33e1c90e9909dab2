"""The names of MongoDB's database commands (MongoDB 8.0's "Database Commands" reference, and
the older names drivers still send: ``isMaster``, ``ismaster``, ``getLastError``), for the
simulator's controls: a fault for a name MongoDB does not have would never fire, so
``server.fail`` refuses it, naming the nearest commands."""

MONGODB_COMMANDS = frozenset("""
abortMoveCollection abortReshardCollection abortTransaction abortUnshardCollection
addShard addShardToZone aggregate analyze analyzeShardKey appendOplogNote applyOps
authenticate autoCompact autoSplitVector balancerCollectionStatus balancerStart
balancerStatus balancerStop buildInfo bulkWrite checkMetadataConsistency
checkShardingIndex cleanupOrphaned cleanupReshardCollection cleanupStructuredEncryptionData
clearJumboFlag cloneCollectionAsCapped collMod collStats commitReshardCollection
commitTransaction commitTransitionToDedicatedConfigServer compact compactStructuredEncryptionData
configureCollectionBalancing configureFailPoint configureQueryAnalyzer connPoolStats
connPoolSync connectionStatus convertToCapped count create createIndexes createRole
createSearchIndexes createUser currentOp dataSize dbHash dbStats delete distinct drop
dropAllRolesFromDatabase dropAllUsersFromDatabase dropConnections dropDatabase
dropIndexes dropRole dropSearchIndex dropUser enableSharding endSessions explain
features filemd5 find findAndModify findandmodify flushRouterConfig fsync fsyncUnlock
getAuditConfig getClusterParameter getCmdLineOpts getDefaultRWConcern getLastError getLog
getMore getParameter getQueryableEncryptionCountInfo getShardMap getShardVersion
getnonce grantPrivilegesToRole grantRolesToRole grantRolesToUser hello hostInfo insert
invalidateUserCache isMaster ismaster isdbgrid killAllSessions killAllSessionsByPattern
killCursors killOp killSessions listCollections listCommands listDatabases listIndexes
listSearchIndexes listShards lockInfo logApplicationMessage logRotate logout mapReduce
mergeAllChunksOnShard mergeChunks moveChunk moveCollection movePrimary moveRange
netstat ping planCacheClear planCacheClearFilters planCacheListFilters
planCacheSetFilter prepareTransaction profile reIndex refineCollectionShardKey
refreshSessions removeQuerySettings removeShard removeShardFromZone renameCollection
replSetAbortPrimaryCatchUp replSetFreeze replSetGetConfig replSetGetStatus
replSetInitiate replSetMaintenance replSetReconfig replSetResizeOplog replSetStepDown
replSetSyncFrom reshardCollection resetPlacementHistory revokePrivilegesFromRole
revokeRolesFromRole revokeRolesFromUser rolesInfo rotateCertificates saslContinue
saslStart serverStatus setAllowMigrations setAuditConfig setClusterParameter
setDefaultRWConcern setFeatureCompatibilityVersion setIndexCommitQuorum setParameter
setQuerySettings setUserWriteBlockMode shardCollection shardConnPoolStats
shardingState shutdown split splitVector startSession top transitionFromDedicatedConfigServer
transitionToDedicatedConfigServer unshardCollection update updateRole
updateSearchIndex updateUser updateZoneKeyRange usersInfo validate validateDBMetadata
whatsmyuri
""".split())


def check_command_name(name: str, served: frozenset) -> None:
    """ValueError for a name that is neither one of MongoDB's commands nor one the simulator
    serves (``served``): a typo (``fnd``) or an invention, whose fault would never fire. The
    message names the nearest commands."""
    import difflib
    known = MONGODB_COMMANDS | served
    if name == "*" or name in known:
        return
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"did you mean {close[0]!r}?" + (
        f" (or {', '.join(map(repr, close[1:]))})" if close[1:] else "") if close else \
        "MongoDB's commands are listed in singlemongo/testing/command_names.py"
    raise ValueError(f"fail({name!r}): MongoDB has no command {name!r} (a fault for it would "
                     f"never fire); {hint}")
