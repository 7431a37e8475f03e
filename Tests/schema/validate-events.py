#!/usr/bin/env python3
"""Validates jobgraph event streams (JSON Lines) against schemas/events.schema.json.

Usage: python3 Tests/schema/validate-events.py SCHEMA FILE...

Checks every line of every FILE: it is one JSON object, valid under the schema, and its keys begin
`time`, `elapsed`, `event` in that order (the schema cannot say that: JSON objects have no order).

Prints one line per problem, `FILE:LINE: message`, then a count per file:
    FILE: N lines, kinds: run-started=1 transition=40 run-finished=1

Exit status: 0 when every line is valid, 1 when some line is not, 2 for unusable input or an invalid
schema, 3 when the `jsonschema` package is missing.
"""

import collections
import json
import sys

try:
    import jsonschema
except ImportError:
    sys.stderr.write(
        "validate-events.py: the Python package 'jsonschema' is not installed; "
        "install it with `pip install jsonschema` (or `apt-get install python3-jsonschema`)\n"
    )
    sys.exit(3)


def main(arguments):
    if len(arguments) < 2:
        sys.stderr.write("usage: validate-events.py SCHEMA FILE...\n")
        return 2
    with open(arguments[0], encoding="utf-8") as file:
        schema = json.load(file)
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        sys.stderr.write(f"invalid schema: {error.message}\n")
        return 2
    validator = jsonschema.Draft202012Validator(schema)
    problems = 0
    for path in arguments[1:]:
        kinds = collections.Counter()
        with open(path, encoding="utf-8") as file:
            lines = file.read().splitlines()
        for number, line in enumerate(lines, start=1):
            try:
                pairs = json.loads(line, object_pairs_hook=lambda pairs: pairs)
                document = json.loads(line)
            except ValueError as error:
                print(f"{path}:{number}: not JSON: {error}")
                problems += 1
                continue
            if not isinstance(document, dict):
                print(f"{path}:{number}: not a JSON object")
                problems += 1
                continue
            keys = [key for key, _ in pairs]
            if keys[:3] != ["time", "elapsed", "event"]:
                print(f"{path}:{number}: keys begin {keys[:3]}, not ['time', 'elapsed', 'event']")
                problems += 1
            if len(set(keys)) != len(keys):
                print(f"{path}:{number}: a key appears twice: {keys}")
                problems += 1
            for error in sorted(validator.iter_errors(document), key=lambda error: list(error.absolute_path)):
                where = "".join("/" + str(part) for part in error.absolute_path) or "/"
                detail = "; ".join(sub.message for sub in error.context) if error.context else error.message
                print(f"{path}:{number}: at {where}: {detail}")
                problems += 1
            kinds[document.get("event")] += 1
        summary = " ".join(f"{kind}={count}" for kind, count in sorted(kinds.items(), key=lambda item: str(item[0])))
        print(f"{path}: {len(lines)} lines, kinds: {summary}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
