// The official Node.js driver against `singlemongo serve replicaset`: everyday calls of an
// application, in order, each result (or error) printed as one JSON line at the end
// (test_nodejs.py checks it). Run: node nodejs_battery.js URI
const { MongoClient } = require("mongodb");

async function main(uri) {
  const client = new MongoClient(uri, { serverSelectionTimeoutMS: 5000 });
  const coll = client.db("app").collection("items");
  const calls = {
    "connect": async () => { await client.connect(); return true; },
    "ping": async () => (await client.db("admin").command({ ping: 1 })).ok,
    "insertOne, _id last": async () => {
      await coll.insertOne({ a: 1, _id: 7 });
      return Object.keys(await coll.findOne({ _id: 7 })).join(",");
    },
    "insertMany": async () => (await coll.insertMany([{ a: 2 }, { a: 3 }])).insertedCount,
    "find().toArray()": async () => (await coll.find({}).sort({ a: 1 }).toArray()).length,
    "findOne projection": async () => JSON.stringify(
      await coll.findOne({ a: 2 }, { projection: { _id: 0 } })),
    "updateOne": async () => (await coll.updateOne({ a: 2 }, { $set: { b: 1 } })).modifiedCount,
    "upsert": async () => (await coll.updateOne({ a: 9 }, { $set: { c: 1 } },
                                               { upsert: true })).upsertedCount,
    "findOneAndUpdate": async () => (await coll.findOneAndUpdate(
      { a: 3 }, { $inc: { a: 10 } }, { returnDocument: "after" })).a,
    "deleteOne": async () => (await coll.deleteOne({ a: 13 })).deletedCount,
    "countDocuments": async () => await coll.countDocuments({}),
    "estimatedDocumentCount": async () => await coll.estimatedDocumentCount(),
    "distinct": async () => (await coll.distinct("a")).length,
    "aggregate": async () => (await coll.aggregate(
      [{ $group: { _id: null, n: { $sum: 1 } } }]).toArray())[0].n,
    "createIndex": async () => await coll.createIndex({ a: 1 }, { unique: true }),
    "duplicate key": async () => {
      try { await coll.insertOne({ a: 1 }); return "no error"; } catch (e) { return e.code; }
    },
    "bulkWrite": async () => {
      const r = await coll.bulkWrite([{ insertOne: { document: { a: 20 } } },
                                     { updateOne: { filter: { a: 20 }, update: { $set: { d: 1 } } } },
                                     { deleteOne: { filter: { a: 20 } } }]);
      return [r.insertedCount, r.modifiedCount, r.deletedCount].join(",");
    },
    "client bulkWrite": async () => {
      const r = await client.bulkWrite([
        { namespace: "app.items", name: "insertOne", document: { a: 50 } },
        { namespace: "audit.events", name: "insertOne", document: { e: 1 } },
        { namespace: "app.items", name: "updateOne", filter: { a: 50 }, update: { $set: { d: 2 } } },
        { namespace: "audit.events", name: "deleteMany", filter: {} }], { verboseResults: true });
      return [r.insertedCount, r.modifiedCount, r.deletedCount, r.insertResults.size].join(",");
    },
    "transaction commit": async () => {
      const session = client.startSession();
      try {
        await session.withTransaction(async () => {
          await coll.insertOne({ a: 30 }, { session });
          await coll.insertOne({ a: 31 }, { session });
        });
      } finally { await session.endSession(); }
      return await coll.countDocuments({ a: { $in: [30, 31] } });
    },
    "transaction abort": async () => {
      const session = client.startSession();
      session.startTransaction();
      await coll.insertOne({ a: 40 }, { session });
      await session.abortTransaction();
      await session.endSession();
      return await coll.countDocuments({ a: 40 });
    },
    "cursor batches": async () => {
      await client.db("app").collection("many").insertMany(
        Array.from({ length: 250 }, (_, i) => ({ i })));
      let n = 0;
      for await (const _ of client.db("app").collection("many").find({}).batchSize(50)) n++;
      return n;
    },
    "listCollections": async () => (await client.db("app").listCollections().toArray())
      .map((c) => c.name).sort().join(","),
    "drop": async () => await coll.drop(),
    "close": async () => { await client.close(); return true; },
  };
  const out = {};
  for (const [name, call] of Object.entries(calls)) {
    try {
      out[name] = { ok: true, value: await call() };
    } catch (e) {
      out[name] = { ok: false, error: String(e.message || e).slice(0, 300) };
    }
  }
  console.log(JSON.stringify(out));
}

main(process.argv[2]).catch((e) => { console.error(e); process.exit(1); });
