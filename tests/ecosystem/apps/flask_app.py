"""A Flask-PyMongo application as its documentation writes it: ``PyMongo(app)`` with
MONGO_URI, a view that inserts and one that lists, ``find_one_or_404``, and a file saved to
GridFS and served back with ``send_file``. Run by the ecosystem tests with PyMongo and with
singlemongo (``install_as_pymongo()``); it prints the responses as JSON."""
import io
import json
import sys

from flask import Flask, jsonify, request
from flask_pymongo import PyMongo


def make_app(uri):
    app = Flask(__name__)
    app.config["MONGO_URI"] = uri
    mongo = PyMongo(app)

    @app.post("/users/<name>")
    def add(name):
        mongo.db.users.insert_one({"_id": name, "age": int(request.args.get("age", 0))})
        return jsonify(ok=True), 201

    @app.get("/users/<name>")
    def show(name):
        user = mongo.db.users.find_one_or_404({"_id": name})
        return jsonify(user)

    @app.get("/users")
    def listing():
        return jsonify([u["_id"] for u in mongo.db.users.find().sort("age", -1)])

    @app.post("/files/<name>")
    def upload(name):
        mongo.save_file(name, io.BytesIO(request.get_data()), content_type="text/plain")
        return jsonify(ok=True), 201

    @app.get("/files/<name>")
    def download(name):
        return mongo.send_file(name)

    return app, mongo


def main(uri):
    app, mongo = make_app(uri)
    mongo.db.users.drop()
    mongo.db["fs.files"].drop()
    mongo.db["fs.chunks"].drop()
    client = app.test_client()
    out = []
    for method, path, data in (("post", "/users/ada?age=36", None),
                               ("post", "/users/alan?age=41", None),
                               ("get", "/users/ada", None), ("get", "/users/nobody", None),
                               ("get", "/users", None),
                               ("post", "/files/notes.txt", b"hello gridfs" * 1000),
                               ("get", "/files/notes.txt", None),
                               ("get", "/files/missing.txt", None)):
        response = getattr(client, method)(path, data=data)
        body = response.get_data()
        out.append([method, path, response.status_code,
                    len(body) if path.startswith("/files") else body.decode()[:200]])
    mongo.cx.close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
