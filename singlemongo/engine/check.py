"""The old home of the handshake builders and the server check (issue 61 moved them to
handshake.py and scanner.py): its names stay importable from here. Nothing in the package
imports this module."""
from singlemongo.engine.handshake import (DOCKER_ENV_PATH, ENV_VAR_K8S, METADATA_LIMIT,  # noqa: F401
                        ORCHESTRATOR_NAME_K8S, RUNTIME_NAME_DOCKER, api_fields, client_metadata,
                        handshake_command, uses_op_msg_hello)
from singlemongo.engine.scanner import (Outcome, check_server, end_unapplied, ended_unapplied_failure,  # noqa: F401
                      failed, hello)
