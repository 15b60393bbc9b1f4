"""Decodes Glue-framed Avro records with AWS's own deserializer (PyPI
aws-glue-schema-registry) against the Glue endpoint of the environment
(AWS_ENDPOINT_URL: moto in the tests), as a consumer would.

stdin: one record a line, "<topic> <key base64 or -> <value base64 or ->".
stdout: one JSON line a record, {"key": …, "value": …}, each decoded value
written as Kafka Connect's JsonConverter writes a payload: bytes and
decimals (their unscaled two's complement) in base64, NaN and infinities as
strings, so that it compares with Tributary's JSON output.
"""
import base64
import decimal
import json
import math
import sys

import boto3
from aws_schema_registry import SchemaRegistryClient
from aws_schema_registry.serde import KafkaDeserializer  # the adapter's, without kafka-python


def unscaled(d):
    sign, digits, exp = d.as_tuple()
    n = int("".join(map(str, digits)) or "0")
    if sign:
        n = -n
    # Java's BigInteger.toByteArray: the fewest bytes with a sign bit.
    bits = (-n - 1).bit_length() if n < 0 else n.bit_length()
    return n.to_bytes(bits // 8 + 1, "big", signed=True)


def as_json(v):
    if isinstance(v, dict):
        return {k: as_json(x) for k, x in v.items()}
    if isinstance(v, list):
        return [as_json(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return base64.b64encode(bytes(v)).decode()
    if isinstance(v, decimal.Decimal):
        return base64.b64encode(unscaled(v)).decode()
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
    return v


def main():
    registry = sys.argv[1]
    client = SchemaRegistryClient(boto3.client("glue"), registry_name=registry)
    deserializer = KafkaDeserializer(client)
    for line in sys.stdin:
        topic, key, value = line.split()
        out = {}
        for name, b64 in (("key", key), ("value", value)):
            if b64 == "-":
                out[name] = None
                continue
            decoded = deserializer.deserialize(topic, base64.b64decode(b64))
            out[name] = as_json(decoded.data)
        print(json.dumps(out))


if __name__ == "__main__":
    main()
