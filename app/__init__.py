"""The app: composition, settings, the command line and stores.

Importing it first imports FastAPI with its OpenAPI document models built on
their first use (``/openapi.json``) rather than at import
(:mod:`agenthost.adapters.model_builds`): every ``agenthost`` command and
server imports FastAPI, and those ~30 models were the largest group it built.
"""

from agenthost.adapters.model_builds import import_deferred

import_deferred("fastapi.openapi.models", absent=("email_validator",))
