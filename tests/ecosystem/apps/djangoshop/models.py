"""Two related models, an embedded model and an array field (django-mongodb-backend)."""
from django.db import models
from django_mongodb_backend.fields import ArrayField, EmbeddedModelField
from django_mongodb_backend.models import EmbeddedModel


class Address(EmbeddedModel):
    city = models.CharField(max_length=50)


class Author(models.Model):
    name = models.CharField(max_length=50, unique=True)
    age = models.IntegerField(default=0)
    tags = ArrayField(models.CharField(max_length=10), default=list)
    address = EmbeddedModelField(Address, null=True)

    class Meta:
        app_label = "djangoshop"


class Book(models.Model):
    title = models.CharField(max_length=50)
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    pages = models.IntegerField()

    class Meta:
        app_label = "djangoshop"
