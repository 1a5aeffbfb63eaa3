"""Translate template.yaml as CloudFormation receives it, for cfn-lint.

`sam validate --lint` and `cfn-lint template.yaml` check the SAM source; some errors exist only
in what the SAM transform makes of it (a route's function that refers to its own API is a
circular dependency only once the API's routes are resources). This runs the SAM translator
the project pins (aws-sam-translator, from requirements.txt) on the template as `sam package`
leaves it (every function's CodeUri an S3 object), and prints the CloudFormation template as
JSON. `make template` lints the result with cfn-lint (docs/operations.md, "Checking the
template").

Usage: python translate.py template.yaml > translated.json
"""

import json
import os
import sys

from samtranslator.translator.transform import transform
from samtranslator.yaml_helper import yaml_parse


class NoManagedPolicies:
    """The translator asks IAM for AWS managed policies only when a function names one by
    name; this template names none (each function has its own role), so no call is made."""

    def load(self):
        return {}


def main(path):
    with open(path) as f:
        template = yaml_parse(f.read())
    for name, resource in template.get("Resources", {}).items():
        props = resource.get("Properties", {})
        if resource.get("Type") == "AWS::Serverless::Function" and "CodeUri" in props:
            props["CodeUri"] = "s3://packaged-artifacts/%s.zip" % name
    # The translator resolves pseudo-parameters with a Region; any one translates the same.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    json.dump(transform(template, {}, NoManagedPolicies()), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
