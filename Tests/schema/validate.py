#!/usr/bin/env python3
"""Validates pipeline documents against the pipeline JSON Schema.

Usage: python3 Tests/schema/validate.py SCHEMA < documents.json

Standard input is a JSON array of {"name": ..., "document": ...}, where each document is a
pipeline file as jobgraph's own YAML loader read it (YAML 1.2 core schema), converted to JSON.
The documents come pre-converted so that the schema is judged against exactly what jobgraph read,
not against PyYAML's YAML 1.1 reading (where `off` would be a boolean).

Prints one JSON line per document, in input order:
    {"name": ..., "valid": true|false, "errors": ["at /tasks/a/priority: 'urgent' is not one of ...", ...]}

Exit status: 0 when every document was judged (valid or not), 2 for unusable input or an invalid
schema, 3 when the `jsonschema` package is missing.
"""

import json
import sys

try:
    import jsonschema
except ImportError:
    sys.stderr.write(
        "validate.py: the Python package 'jsonschema' is not installed; "
        "install it with `pip install jsonschema` (or `apt-get install python3-jsonschema`)\n"
    )
    sys.exit(3)


def describe(error):
    """One line for one validation error: where in the document, then what is wrong."""
    pointer = "".join("/" + str(part) for part in error.absolute_path) or "/"
    message = error.message
    if error.context:
        # "not valid under any of the given schemas" says little: say what each alternative missed,
        # leaving out the alternatives of another type (a string is not a list, as the user knows).
        reasons = [sub.message for sub in error.context if sub.validator != "type"] or [
            sub.message for sub in error.context
        ]
        message += " (" + " or ".join(dict.fromkeys(reasons)) + ")"
    return f"at {pointer}: {message}"


def main(arguments):
    if len(arguments) != 2:
        sys.stderr.write("usage: python3 validate.py SCHEMA < documents.json\n")
        return 2
    try:
        with open(arguments[1], encoding="utf-8") as schema_file:
            schema = json.load(schema_file)
        jsonschema.Draft202012Validator.check_schema(schema)
    except (OSError, ValueError) as problem:
        sys.stderr.write(f"validate.py: cannot read the schema {arguments[1]}: {problem}\n")
        return 2
    except jsonschema.SchemaError as problem:
        sys.stderr.write(f"validate.py: {arguments[1]} is not a valid draft 2020-12 schema: {problem.message}\n")
        return 2

    try:
        batch = json.load(sys.stdin)
    except ValueError as problem:
        sys.stderr.write(f"validate.py: standard input is not JSON: {problem}\n")
        return 2
    if not isinstance(batch, list) or not all(
        isinstance(entry, dict) and "name" in entry and "document" in entry for entry in batch
    ):
        sys.stderr.write('validate.py: expected a JSON array of {"name": ..., "document": ...}\n')
        return 2

    validator = jsonschema.Draft202012Validator(schema)
    for entry in batch:
        errors = sorted(
            validator.iter_errors(entry["document"]),
            key=lambda error: [str(part) for part in error.absolute_path],
        )
        print(json.dumps({
            "name": entry["name"],
            "valid": not errors,
            "errors": [describe(error) for error in errors],
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
