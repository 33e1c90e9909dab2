"""A Django application for django_app.py: its models, on the official MongoDB backend."""
