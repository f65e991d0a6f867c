"""The official Python a2a-sdk 1.x as a client of a served fleet behind one URL: send (blocking),
get, list, a paused task resumed with its decisions, cancel of a running task, and a subscription
to a running task. Each call is one request, which the proxy in front sends to the next replica.
Prints one JSON object with what it saw.
Usage: python a2a1_fleet_client.py <fleet url> <bearer token>"""
import asyncio
import json
import sys
import uuid

import httpx
from google.protobuf import struct_pb2
from google.protobuf.json_format import MessageToDict, ParseDict

from a2a.client import ClientConfig, ClientFactory
from a2a.types import (CancelTaskRequest, GetTaskRequest, ListTasksRequest, Message, Part, Role,
                       SendMessageConfiguration, SendMessageRequest, SubscribeToTaskRequest)

URL, TOKEN = sys.argv[1], sys.argv[2]


def request(parts, task=None, **config) -> SendMessageRequest:
    message = Message(message_id=str(uuid.uuid4()), role=Role.ROLE_USER, parts=parts)
    if task is not None:
        message.task_id, message.context_id = task['id'], task['contextId']
    return SendMessageRequest(message=message, configuration=SendMessageConfiguration(**config))


def text(t: str):
    return [Part(text=t)]


async def only_task(stream) -> dict:
    events = [MessageToDict(e) async for e in stream]
    return events[-1]['task']


async def main() -> None:
    out: dict = {}
    http = httpx.AsyncClient(headers={'authorization': f'Bearer {TOKEN}'}, timeout=30)
    c = await ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create_from_url(URL)
    s = await ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create_from_url(URL)
    sent = await only_task(c.send_message(request(text('hello'))))
    out['sent'] = sent
    out['got'] = MessageToDict(await c.get_task(GetTaskRequest(id=sent['id'])))
    paused = await only_task(c.send_message(request(text('pay 42'))))
    out['paused'] = paused
    interruption = paused['status']['message']['parts'][1]['data']['interruptions'][0]['id']
    decisions = Part(data=ParseDict({'decisions': {interruption: {'approve': True}}}, struct_pb2.Value()))
    out['resumed'] = await only_task(c.send_message(request([decisions], task=paused)))
    out['listed'] = MessageToDict(await c.list_tasks(ListTasksRequest(page_size=10)))
    running = await only_task(c.send_message(request(text('slow 30000'), return_immediately=True)))
    out['cancelled'] = MessageToDict(await c.cancel_task(CancelTaskRequest(id=running['id'])))
    watched = await only_task(c.send_message(request(text('slow 1500'), return_immediately=True)))
    out['watched'] = watched
    out['subscribed'] = [MessageToDict(e) async for e in s.subscribe(SubscribeToTaskRequest(id=watched['id']))]
    await http.aclose()
    print(json.dumps(out))


asyncio.run(main())
