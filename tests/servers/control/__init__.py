"""The guides' examples written for PyMongo, the control in tests/servers/measure.py."""
