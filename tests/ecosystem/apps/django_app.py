"""Django's ORM on MongoDB's official backend (django-mongodb-backend) as its documentation
writes it: the schema made by ``migrate``, a unique constraint, a join, an annotation with
Count and Sum over a relation, aggregates, an embedded model, an array field, an F()
update, a transaction rolled back and one committed, and a cascading delete. Run by the
ecosystem tests with PyMongo and with singlemongo (``install_as_pymongo()``); it prints the
results as JSON. Before, ``count()`` was 0 and the annotation failed: the simulator's
$getField ignored an ``input`` expression and its $type knew no ObjectId."""
import io
import json
import sys


def _setup(uri):
    import django
    from django.conf import settings
    settings.configure(
        DATABASES={"default": {"ENGINE": "django_mongodb_backend", "HOST": uri,
                               "NAME": "ecosystem_django"}},
        INSTALLED_APPS=["tests.ecosystem.apps.djangoshop"], USE_TZ=True,
        DEFAULT_AUTO_FIELD="django_mongodb_backend.fields.ObjectIdAutoField")
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    connection.connect()
    connection.database.client.drop_database("ecosystem_django")
    call_command("migrate", "--run-syncdb", verbosity=0, stdout=io.StringIO())
    return connection


def _queries(Author, Book):
    from django.db.models import Avg, Count, F, Q, Sum
    out = {"count": Book.objects.count()}
    out["filter"] = list(Book.objects.filter(pages__gte=103).order_by("pages")
                         .values_list("title", flat=True))
    out["join"] = list(Book.objects.filter(author__name="ann").order_by("title")
                       .values_list("title", flat=True))
    out["annotate"] = list(Author.objects.annotate(n=Count("books"), p=Sum("books__pages"))
                           .order_by("name").values("name", "n", "p"))
    out["aggregate"] = Book.objects.aggregate(avg=Avg("pages"), total=Sum("pages"))
    out["embedded"] = Author.objects.get(address__city="Oslo").name
    out["array"] = list(Author.objects.filter(tags__contains=["x"]).values_list("name", flat=True))
    Author.objects.filter(name="bob").update(age=F("age") + 1)
    out["updated"] = Author.objects.get(name="bob").age
    out["q"] = list(Author.objects.filter(Q(age__gt=35) | Q(name="ann")).order_by("name")
                    .values_list("name", flat=True))
    return out


def main(uri):
    connection = _setup(uri.replace("/ecosystem?", "/?"))
    from django.db import IntegrityError
    from django_mongodb_backend import transaction

    from .djangoshop.models import Address, Author, Book
    ann = Author.objects.create(name="ann", age=30, tags=["x", "y"], address=Address(city="Oslo"))
    bob = Author.objects.create(name="bob", age=40)
    Book.objects.bulk_create([Book(title=f"b{i}", author=ann if i % 2 else bob, pages=100 + i)
                              for i in range(6)])
    try:
        Author.objects.create(name="ann")
        out = {"duplicate": "no error"}
    except IntegrityError:
        out = {"duplicate": "IntegrityError"}
    out.update(_queries(Author, Book))
    try:
        with transaction.atomic():
            Author.objects.create(name="carl")
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    with transaction.atomic():
        Author.objects.create(name="dora")
    out["rolled_back"] = Author.objects.filter(name="carl").count()
    out["committed"] = Author.objects.filter(name="dora").count()
    out["deleted"] = Author.objects.filter(name="ann").delete()
    out["books_left"] = Book.objects.count()
    out["indexes"] = sorted(connection.database["djangoshop_author"].index_information())
    connection.database.client.drop_database("ecosystem_django")
    return out


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1])))
