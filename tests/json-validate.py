#!/usr/bin/python3
"""Checks one --json output of memcg-policy: exactly one JSON object and
nothing else on stdout, valid against schema/memcg-policy.schema.json, and
for report objects an exit_code equal to the program's.

usage: json-validate.py SCHEMA OUTPUT-FILE EXIT-CODE
Prints nothing and exits 0 when the output is valid; else prints why and
exits 1."""
import json
import sys

import jsonschema


def main():
    schema_path, out_path, rc = sys.argv[1], sys.argv[2], int(sys.argv[3])
    with open(schema_path, encoding="utf-8") as f:
        schema = json.load(f)
    with open(out_path, encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        print("output does not end with a newline")
        return 1
    try:
        obj, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as e:
        print(f"not JSON: {e}: {text[:200]!r}")
        return 1
    if text[end:].strip():
        print(f"more than one JSON value, or text after it: {text[end:][:200]!r}")
        return 1
    if not isinstance(obj, dict):
        print("not a JSON object")
        return 1
    jsonschema.Draft7Validator.check_schema(schema)
    errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(obj), key=lambda e: list(e.path))
    if errors:
        for e in errors[:5]:
            print(f"schema: {'/'.join(map(str, e.path)) or '(top)'}: {e.message[:300]}")
            for c in sorted(e.context, key=lambda c: len(c.path))[:3]:
                print(f"  {'/'.join(map(str, c.path)) or '(top)'}: {c.message[:200]}")
        return 1
    if "exit_code" in obj and obj["exit_code"] != rc:
        print(f"exit_code {obj['exit_code']} in the object, but the program exited {rc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
