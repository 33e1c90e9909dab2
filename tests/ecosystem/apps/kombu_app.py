"""kombu's MongoDB transport (Celery's broker on MongoDB) as its documentation writes it: a
queue declared, two messages published and consumed, the queue deleted. kombu passes
``connectTimeoutMS=None`` to MongoClient (PyMongo's "no timeout"). Run by the ecosystem tests
with PyMongo and with singlemongo (``install_as_pymongo()``); it prints what it saw as JSON."""
import json
import socket
import sys

from kombu import Connection, Exchange, Queue


def main(uri):
    got = []
    with Connection(uri.replace("/ecosystem?", "/ecosystem_kombu?")) as conn:
        queue = Queue("tasks", Exchange("tasks"), routing_key="tasks")
        producer = conn.Producer()
        for n in (1, 2):
            producer.publish({"hello": n}, exchange=queue.exchange, routing_key="tasks",
                             declare=[queue])

        def received(body, message):
            got.append(body)
            message.ack()

        with conn.Consumer(queue, callbacks=[received]):
            for _ in range(10):
                if len(got) == 2:
                    break
                try:
                    conn.drain_events(timeout=1)
                except socket.timeout:
                    break
        queue(conn).delete()
    return {"received": got}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
