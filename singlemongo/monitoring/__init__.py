"""Observability: event listeners, command monitoring and logging under the spec's components."""
