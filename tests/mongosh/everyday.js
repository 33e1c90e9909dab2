// Everyday mongosh calls, in order, against a fresh simulated replica set: each call's
// result (or error) is printed as one JSON line at the end (test_everyday.py checks it).
const calls = {
  "db.version()": () => db.version(),
  "rs.status()": () => rs.status().set,
  "rs.conf()": () => rs.conf()._id,
  "rs.hello()": () => rs.hello().setName,
  "db.hello()": () => db.hello().isWritablePrimary,
  "db.serverStatus()": () => db.serverStatus().ok,
  "db.stats()": () => db.stats().ok,
  "show dbs": () => db.adminCommand({listDatabases: 1}).ok,
  "db.getCollectionNames()": () => db.getCollectionNames().length,
  "insertOne, _id last": () => {
    db.t.insertOne({a: 1, _id: 7});
    return Object.keys(db.t.findOne({_id: 7})).join(",");
  },
  "insertMany": () => db.t.insertMany([{a: 2}, {a: 3}]).acknowledged,
  "find().toArray()": () => db.t.find().toArray().length,
  "findOne": () => db.t.findOne({a: 2}).a,
  "countDocuments": () => db.t.countDocuments({}),
  "estimatedDocumentCount": () => db.t.estimatedDocumentCount(),
  "updateOne": () => db.t.updateOne({a: 2}, {$set: {b: 1}}).modifiedCount,
  "deleteOne": () => db.t.deleteOne({a: 3}).deletedCount,
  "aggregate": () => db.t.aggregate([{$group: {_id: null, n: {$sum: 1}}}]).toArray()[0].n,
  "createIndex": () => db.t.createIndex({a: 1}),
  "getIndexes": () => db.t.getIndexes().length,
  "explain": () => typeof db.t.find().explain().queryPlanner,
  "db.t.stats()": () => db.t.stats().ok,
  "db.currentOp()": () => db.currentOp().inprog.length,
  "db.hostInfo()": () => typeof db.hostInfo().system,
  "connectionStatus": () => db.runCommand({connectionStatus: 1}).authInfo.authenticatedUsers.length,
  "listCommands": () => "find" in db.adminCommand({listCommands: 1}).commands,
  "getLog": () => db.adminCommand({getLog: "global"}).log.length,
  "db.killOp()": () => db.killOp(12345).info,
  "db.getUsers()": () => db.getUsers().users.length,
  "db.getLogComponents()": () => db.getLogComponents().verbosity,
  "db.printReplicationInfo()": () => { db.printReplicationInfo(); return true; },
  "rs.printSecondaryReplicationInfo()": () => { rs.printSecondaryReplicationInfo(); return true; },
  "db.serverBuildInfo()": () => db.serverBuildInfo().version,
  "db.getProfilingStatus()": () => db.getProfilingStatus().was,
  "db.t.drop()": () => db.t.drop(),
};
const out = {};
for (const [name, call] of Object.entries(calls)) {
  try {
    out[name] = {ok: true, value: call()};
  } catch (e) {
    out[name] = {ok: false, error: String(e.message || e).slice(0, 300)};
  }
}
print(JSON.stringify(out));
