#!/usr/bin/env python3
"""A command-line tool: a to-do list kept in MongoDB.

    python3 cli_tool.py mongodb://localhost/todo add "buy milk"
    python3 cli_tool.py mongodb://localhost/todo done "buy milk"
    python3 cli_tool.py mongodb://localhost/todo list
"""
from __future__ import annotations

import argparse
import datetime
import sys

from singlemongo import ASCENDING, MongoClient
from singlemongo.errors import DuplicateKeyError, PyMongoError


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="A to-do list kept in MongoDB.")
    parser.add_argument("uri")
    parser.add_argument("action", choices=("add", "done", "list"))
    parser.add_argument("title", nargs="?")
    args = parser.parse_args(argv)
    if args.action != "list" and not args.title:
        parser.error(f"{args.action} needs a title")
    try:
        with MongoClient(args.uri) as client:
            todos = client.get_database().todos
            todos.create_index([("title", ASCENDING)], unique=True)
            if args.action == "add":
                todos.insert_one({"title": args.title, "done": False,
                                  "added": datetime.datetime.now(datetime.timezone.utc)})
            elif args.action == "done":
                if todos.update_one({"title": args.title},
                                    {"$set": {"done": True}}).matched_count == 0:
                    print(f"no such to-do: {args.title}", file=sys.stderr)
                    return 1
            else:
                for todo in todos.find().sort("added", ASCENDING):
                    print(f"[{'x' if todo['done'] else ' '}] {todo['title']}")
    except DuplicateKeyError:
        print(f"already on the list: {args.title}", file=sys.stderr)
        return 1
    except PyMongoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
