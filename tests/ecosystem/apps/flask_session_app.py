"""Flask-Session's MongoDB session interface as its documentation writes it: a Flask app whose
sessions live in a collection, read and written over three requests, then cleared. Run by
the ecosystem tests with PyMongo and with singlemongo (``install_as_pymongo()``)."""
import flask
from flask_session import Session
from pymongo import MongoClient


def main(uri):
    client = MongoClient(uri)
    client.drop_database("flask_session")
    app = flask.Flask("flask_session_app")
    app.config.update(SESSION_TYPE="mongodb", SESSION_MONGODB=client, SECRET_KEY="k",
                      SESSION_MONGODB_DB="flask_session", SESSION_MONGODB_COLLECT="sessions")
    Session(app)

    @app.route("/visit/<name>")
    def visit(name):
        flask.session["name"] = name
        flask.session["visits"] = flask.session.get("visits", 0) + 1
        return "ok"

    @app.route("/whoami")
    def whoami():
        return flask.jsonify(dict(flask.session))

    @app.route("/logout")
    def logout():
        flask.session.clear()
        return "bye"

    browser = app.test_client()
    out = {"visits": [browser.get(f"/visit/{n}").text for n in ("ann", "bob")],
           "session": browser.get("/whoami").json,
           "stored": client.flask_session.sessions.count_documents({}),
           "fields": sorted(client.flask_session.sessions.find_one())}
    out["logout"] = browser.get("/logout").text
    out["after"] = browser.get("/whoami").json
    out["indexes"] = sorted(client.flask_session.sessions.index_information())
    return out
