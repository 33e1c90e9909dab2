"""APScheduler's MongoDB job store as its documentation writes it: jobs added, looked up,
listed, modified, due jobs found, removed. Run by the ecosystem tests with PyMongo and with
singlemongo (``install_as_pymongo()``); it prints what it saw as JSON."""
import datetime
import json
import sys

from apscheduler.jobstores.mongodb import MongoDBJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from pymongo import MongoClient


def tick():
    return "tick"


def main(uri):
    client = MongoClient(uri)
    client.apscheduler.jobs.drop()
    store = MongoDBJobStore(client=client)
    scheduler = BackgroundScheduler(jobstores={"default": store}, timezone="UTC")
    out = {}
    try:
        scheduler.add_job(tick, "interval", minutes=5, id="every5")
        scheduler.add_job(tick, "date", run_date=datetime.datetime(2030, 1, 1,
                                                                    tzinfo=datetime.timezone.utc),
                          id="once")
        out["stored"] = sorted(d["_id"] for d in client.apscheduler.jobs.find())
        scheduler.start(paused=True)
        out["jobs"] = sorted(j.id for j in scheduler.get_jobs())
        scheduler.modify_job("once", name="renamed")
        out["renamed"] = scheduler.get_job("once").name
        due = store.get_due_jobs(datetime.datetime(2031, 1, 1, tzinfo=datetime.timezone.utc))
        out["due"] = sorted(j.id for j in due)
        out["next"] = store.get_next_run_time() is not None
        scheduler.remove_job("every5")
        out["left"] = sorted(j.id for j in scheduler.get_jobs())
        scheduler.remove_all_jobs()
        out["empty"] = client.apscheduler.jobs.count_documents({})
    finally:
        if scheduler.running:
            scheduler.shutdown(wait=False)
        client.close()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
