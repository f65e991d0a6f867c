"""The official Python a2a-sdk 1.x as a client of serveAgent: reads the card, sends (blocking), streams,
and cancels a slow task, each inside a span of its own exported to the stack's collector so that
the served runs join its trace. Prints one JSON object with what it saw.
Usage: python a2a1_client.py <agent url> <bearer token>"""
import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.propagate import inject

from a2a.client import ClientConfig, ClientFactory
from a2a.types import CancelTaskRequest, Message, Part, Role, SendMessageConfiguration, SendMessageRequest

from otel_setup import tracer

URL, TOKEN = sys.argv[1], sys.argv[2]
TRACER, PROVIDER = tracer('python-a2a1-client')


def request(text: str, **config) -> SendMessageRequest:
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=[Part(text=text)])
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(**config))


async def client(streaming: bool):
    headers = {'authorization': f'Bearer {TOKEN}'}
    inject(headers)  # the traceparent of the span this runs in
    http = httpx.AsyncClient(headers=headers, timeout=30)
    return await ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create_from_url(URL), http


async def main() -> None:
    out: dict = {}
    with TRACER.start_as_current_span('python a2a1 client', kind=trace.SpanKind.CLIENT) as span:
        out['traceId'] = format(span.get_span_context().trace_id, '032x')
        c, http = await client(streaming=False)
        card = await c.get_card() if hasattr(c, 'get_card') else None
        out['card'] = MessageToDict(c._card) if card is None else MessageToDict(card)
        sent = [MessageToDict(e) async for e in c.send_message(request('capital of France'))]
        out['send'] = sent
        await http.aclose()
        c, http = await client(streaming=True)
        out['stream'] = [MessageToDict(e) async for e in c.send_message(request('capital of Italy'))]
        started = [MessageToDict(e) async for e in (await client(streaming=False))[0].send_message(request('slow work', return_immediately=True))]
        task_id = started[0]['task']['id']
        out['started'] = started
        await asyncio.sleep(0.3)
        out['cancel'] = MessageToDict(await c.cancel_task(CancelTaskRequest(id=task_id)))
        await http.aclose()
    PROVIDER.shutdown()
    print(json.dumps(out))


asyncio.run(main())
