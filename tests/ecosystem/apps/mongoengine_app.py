"""A mongoengine program as its documentation writes it: Documents saved and queried, a
ReferenceField dereferenced, a list of references, a file in a FileField (GridFS), an
update, a unique index refusing a duplicate, an aggregation. Run by the ecosystem tests with
PyMongo and with singlemongo (``install_as_pymongo()``); it prints what it saw as JSON."""
import datetime
import io
import json
import sys

from bson import DBRef
from mongoengine import (DateTimeField, Document, EmbeddedDocument, EmbeddedDocumentField,
                         FileField, IntField, ListField, NotUniqueError, ReferenceField,
                         StringField, connect, disconnect_all)


class Author(Document):
    name = StringField(required=True, unique=True)
    born = IntField()


class Address(EmbeddedDocument):
    city = StringField()


class Book(Document):
    title = StringField(required=True)
    author = ReferenceField(Author)
    co_authors = ListField(ReferenceField(Author))
    address = EmbeddedDocumentField(Address)
    pages = IntField(default=0)
    cover = FileField()
    published = DateTimeField()
    meta = {"indexes": ["title", "-pages"]}


def main(uri):
    disconnect_all()
    connect(host=uri, uuidRepresentation="standard")
    Author.drop_collection()
    Book.drop_collection()
    ada = Author(name="Ada", born=1815).save()
    alan = Author(name="Alan", born=1912).save()
    book = Book(title="Notes", author=ada, co_authors=[alan], address=Address(city="London"),
                pages=42, published=datetime.datetime(1843, 1, 1))
    book.cover.put(io.BytesIO(b"\x89PNG" + b"x" * 300_000), content_type="image/png",
                   filename="cover.png")
    book.save()
    Book(title="Machines", author=alan, pages=10).save()
    out = {}
    loaded = Book.objects.get(title="Notes")
    out["author"] = loaded.author.name  # dereferenced on access
    out["co_authors"] = [a.name for a in loaded.co_authors]
    out["city"] = loaded.address.city
    cover = loaded.cover.read()
    out["cover"] = [len(cover), cover[:4].hex(), loaded.cover.content_type,
                    loaded.cover.filename]
    out["by_pages"] = [b.title for b in Book.objects.order_by("-pages")]
    out["count"] = Book.objects(pages__gte=10).count()
    out["select_related"] = [b.author.name for b in Book.objects.select_related()]
    Book.objects(title="Machines").update_one(inc__pages=5)
    out["updated"] = Book.objects.get(title="Machines").pages
    try:
        Author(name="Ada").save()
        out["duplicate"] = "saved"
    except NotUniqueError as exc:
        out["duplicate"] = type(exc).__name__
    out["pipeline"] = list(Book.objects.aggregate(
        [{"$group": {"_id": None, "pages": {"$sum": "$pages"}}}, {"$project": {"_id": 0}}]))
    out["indexes"] = sorted(Book._get_collection().index_information())
    out["deref"] = Book._get_db().dereference(DBRef("author", ada.id))["name"]
    loaded.cover.delete()
    loaded.save()
    out["cover_after_delete"] = Book.objects.get(title="Notes").cover.read()
    out["files_left"] = Book._get_db()["fs.files"].count_documents({})
    Book.objects(title="Machines").delete()
    out["left"] = [b.title for b in Book.objects]
    disconnect_all()
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1]), default=str))
