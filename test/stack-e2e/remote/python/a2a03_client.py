"""The official Python a2a-sdk 0.3 as a client of serveAgent: reads the card (no A2A-Version sent),
sends, streams, and cancels a slow task, inside a span of its own exported to the stack's
collector so that the served runs join its trace. Prints one JSON object with what it saw.
Usage: python a2a03_client.py <agent url> <bearer token>"""
import asyncio
import json
import sys
import uuid

import httpx
from opentelemetry import trace
from opentelemetry.propagate import inject

from a2a.client import ClientConfig, ClientFactory
from a2a.types import Message, MessageSendConfiguration, Part, Role, TaskIdParams, TextPart

from otel_setup import tracer

URL, TOKEN = sys.argv[1], sys.argv[2]
TRACER, PROVIDER = tracer('python-a2a03-client')


def message(text: str) -> Message:
    return Message(message_id=str(uuid.uuid4()), role=Role.user, parts=[Part(root=TextPart(text=text))])


def dump(event) -> object:
    if isinstance(event, tuple):
        return [None if e is None else e.model_dump(mode='json', exclude_none=True) for e in event]
    return event.model_dump(mode='json', exclude_none=True)


async def client(streaming: bool, polling: bool = False):
    headers = {'authorization': f'Bearer {TOKEN}'}
    inject(headers)
    http = httpx.AsyncClient(headers=headers, timeout=30)
    return await ClientFactory.connect(URL, client_config=ClientConfig(httpx_client=http, streaming=streaming, polling=polling)), http


async def main() -> None:
    out: dict = {}
    with TRACER.start_as_current_span('python a2a03 client', kind=trace.SpanKind.CLIENT) as span:
        out['traceId'] = format(span.get_span_context().trace_id, '032x')
        c, http = await client(streaming=False)
        out['card'] = (await c.get_card()).model_dump(mode='json', exclude_none=True)
        out['send'] = [dump(e) async for e in c.send_message(message('capital of France'))]
        c, http = await client(streaming=True)
        out['stream'] = [dump(e) async for e in c.send_message(message('capital of Italy'))]
        p, _ = await client(streaming=False, polling=True)
        started = [dump(e) async for e in p.send_message(message('slow work'))]
        out['started'] = started
        task_id = started[0][0]['id']
        await asyncio.sleep(0.3)
        out['cancel'] = (await c.cancel_task(TaskIdParams(id=task_id))).model_dump(mode='json', exclude_none=True)
    PROVIDER.shutdown()
    print(json.dumps(out))


asyncio.run(main())
