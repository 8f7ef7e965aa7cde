"""Run by the ADK's own Python (not agenthost's): ``orchestrate evaluations
validate-external``'s validator against one served agent.

``python adk_validate.py URL KEY SCHEME INPUT...`` prints, as JSON, the
validator's result for each input alone and after its prebuilt block of
messages (what the command checks), with ``SCHEME`` ``API_KEY`` or
``BEARER_TOKEN`` (how Orchestrate sends the credential).
"""

import json
import sys

from agentops.external_agent.external_validate import ExternalAgentValidation

url, key, scheme, *inputs = sys.argv[1:]
validator = ExternalAgentValidation(credential=key, auth_scheme=scheme, service_url=url)
results = [
    validator.call_validation(text, add_context) for text in inputs for add_context in (False, True)
]
print(json.dumps(results))
