"""OpenTelemetry for the Python side of the interop tests: spans exported to the stack's collector (OTLP/HTTP)."""
import os

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor


def tracer(service: str):
    """A tracer whose spans go to SYMFONIC_STACK_OTLP as `service`; flush with provider().shutdown()."""
    provider = TracerProvider(resource=Resource.create({'service.name': service}))
    endpoint = os.environ['SYMFONIC_STACK_OTLP'].rstrip('/') + '/v1/traces'
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    trace.set_tracer_provider(provider)
    return trace.get_tracer('symfonic-interop'), provider
