#!/usr/bin/env python3
"""Scrapes a Prometheus /metrics URL and parses it with prometheus_client's own text parser.

Usage: parse_metrics.py URL [TOKEN]. Prints {"families": [{name, type}], "samples": {"name{k="v",...}":
value}} as JSON. Exit 77 when prometheus_client is not installed (the test skips), 1 when the
text does not parse or the scrape fails.
"""
import json
import sys
import urllib.request

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("python3 prometheus_client is not installed (Debian: python3-prometheus-client)")
    sys.exit(77)


def main():
    url = sys.argv[1]
    token = sys.argv[2] if len(sys.argv) > 2 else ""
    headers = {"Authorization": "Bearer " + token} if token else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=20) as reply:
            text = reply.read().decode("utf-8")
    except Exception as error:  # the test prints it
        print(f"scrape of {url} failed: {error}")
        return 1
    families, samples = [], {}
    try:
        for family in text_string_to_metric_families(text):
            families.append({"name": family.name, "type": family.type})
            for sample in family.samples:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
                samples[f"{sample.name}{{{labels}}}"] = sample.value
    except Exception as error:
        print(f"not the Prometheus text format: {error}")
        return 1
    print(json.dumps({"families": families, "samples": samples}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
