"""An Eve REST API as its documentation writes it: a domain with a unique field, ETags,
versioning, soft delete, a media field (GridFS), an embeddable relation and an aggregation
endpoint, driven through Flask's test client. Eve checks its MongoClient keywords with
``pymongo.uri_parser.validate_options`` (``connect``, ``tz_aware``: before, both were refused
as unknown and no request could be served). Run by the ecosystem tests with PyMongo and with
singlemongo (``install_as_pymongo()``); it prints the responses as JSON."""
import base64
import io
import json
import sys

import pymongo
from eve import Eve

DOMAIN = {
    "people": {"schema": {"name": {"type": "string", "unique": True},
                          "age": {"type": "integer"}}},
    "docs": {"versioning": True, "soft_delete": True,
             "schema": {"title": {"type": "string"}, "n": {"type": "integer"},
                        "file": {"type": "media"},
                        "owner": {"type": "objectid", "data_relation": {
                            "resource": "people", "embeddable": True}}}},
    "totals": {"datasource": {"source": "docs", "aggregation": {"pipeline": [
        {"$match": {"n": {"$gte": "$min"}}},
        {"$group": {"_id": None, "total": {"$sum": "$n"}}}]}}},
}


def _reply(response):
    return response.status_code, json.loads(response.data or b"null")


def _people(client):
    out = {}
    status, body = _reply(client.post("/people", json=[{"name": "ann", "age": 3},
                                                       {"name": "bob", "age": 5}]))
    out["post"] = [status, [item["_status"] for item in body["_items"]]]
    out["duplicate"] = _reply(client.post("/people", json={"name": "ann"}))[1]["_issues"]
    status, body = _reply(client.get('/people?where={"age": {"$gt": 2}}&sort=-age'))
    out["list"] = [status, [item["name"] for item in body["_items"]], body["_meta"]]
    ann = body["_items"][1]
    out["patch"] = _reply(client.patch(f"/people/{ann['_id']}", json={"age": 9},
                                       headers={"If-Match": ann["_etag"]}))[0]
    out["stale_etag"] = client.patch(f"/people/{ann['_id']}", json={"age": 1},
                                     headers={"If-Match": ann["_etag"]}).status_code
    out["get"] = _reply(client.get(f"/people/{ann['_id']}"))[1]["age"]
    return out, ann["_id"]


def _docs(client, owner):
    out = {}
    status, body = _reply(client.post("/docs", data={
        "title": "t1", "n": "5", "owner": owner, "file": (io.BytesIO(b"hello media"), "a.txt")},
        content_type="multipart/form-data"))
    out["media_post"] = [status, body["_status"]]
    client.post("/docs", json={"title": "t2", "n": 7})
    status, body = _reply(client.get('/docs?embedded={"owner": 1}&sort=n'))
    out["embedded"] = [[d["title"], (d.get("owner") or {}).get("name")] for d in body["_items"]]
    first = body["_items"][0]
    out["media"] = base64.b64decode(first["file"]).decode()
    out["patch_version"] = _reply(client.patch(f"/docs/{first['_id']}", json={"n": 6},
                                               headers={"If-Match": first["_etag"]}))[1]["_version"]
    out["versions"] = [d["n"] for d in _reply(client.get(
        f"/docs/{first['_id']}?version=all"))[1]["_items"]]
    totals = _reply(client.get('/totals?aggregate={"$min": 6}'))[1]["_items"]
    out["totals"] = [d["total"] for d in totals]
    etag = _reply(client.get(f"/docs/{first['_id']}"))[1]["_etag"]
    out["soft_delete"] = client.delete(f"/docs/{first['_id']}",
                                       headers={"If-Match": etag}).status_code
    out["after_delete"] = _reply(client.get(f"/docs/{first['_id']}"))
    out["after_delete"] = [out["after_delete"][0], out["after_delete"][1].get("_deleted")]
    out["show_deleted"] = len(_reply(client.get("/docs?show_deleted"))[1]["_items"])
    return out


def main(uri):
    uri = uri.replace("/ecosystem?", "/ecosystem_eve?")
    app = Eve(settings={"MONGO_URI": uri, "RESOURCE_METHODS": ["GET", "POST", "DELETE"],
                        "ITEM_METHODS": ["GET", "PATCH", "PUT", "DELETE"],
                        "RETURN_MEDIA_AS_BASE64_STRING": True, "DOMAIN": DOMAIN})
    client = app.test_client()
    out, owner = _people(client)
    out.update(_docs(client, owner))
    out["delete_all"] = client.delete("/people").status_code
    db = pymongo.MongoClient(uri).get_default_database()
    out["collections"] = sorted(db.list_collection_names())
    out["gridfs_files"] = db.fs.files.count_documents({})
    db.client.drop_database(db.name)
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
