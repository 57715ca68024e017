#!/usr/bin/env python3
"""Renders chat templates with Jinja2 configured exactly as transformers configures it
(src/transformers/utils/chat_template_utils.py, _compile_jinja_template): an
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks, the loopcontrols extension, a
{% generation %} tag that renders its body, raise_exception, strftime_now and transformers' tojson.

Usage: jinja_oracle.py IN.json OUT.json, where IN is {"cases": [{"template", "context"}]} and OUT
is one {"ok": true, "text"} or {"ok": false, "error"} per case. Exit 3 when jinja2 is missing.
"""
import json
import sys
from datetime import datetime

try:
    import jinja2
    from jinja2.ext import Extension
    from jinja2.sandbox import ImmutableSandboxedEnvironment
except ImportError as e:  # the C++ test turns this into a loud failure
    print(f"jinja2 is not installed: {e}", file=sys.stderr)
    sys.exit(3)


class Generation(Extension):
    """transformers' AssistantTracker without the tracking: {% generation %} renders its body."""
    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render"), [], [], body).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def strftime_now(format):
    return datetime.now().strftime(format)


def environment():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[Generation, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    env = environment()
    results = []
    for case in cases:
        try:
            text = env.from_string(case["template"]).render(**case["context"])
            results.append({"ok": True, "text": text})
        except Exception as e:  # noqa: BLE001 - every failure is a result to compare
            results.append({"ok": False, "error": f"{type(e).__name__}: {e}"})
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"jinja2": jinja2.__version__, "results": results}, f, ensure_ascii=False)


if __name__ == "__main__":
    main()
