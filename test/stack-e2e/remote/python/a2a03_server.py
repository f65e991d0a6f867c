"""An A2A agent on the official Python a2a-sdk 0.3: answers "python says: <task>", or, for a task
containing "slow", works until cancelled (and prints "CANCELLED <task id>"). Joins the caller's trace with a SERVER span of its own,
exported to the stack's collector. Prints "SERVED <url>" once listening.
Usage: python a2a03_server.py <port> <bearer token>"""
import asyncio
import sys

import uvicorn
from opentelemetry import trace
from opentelemetry.propagate import extract
from starlette.middleware.base import BaseHTTPMiddleware
from starlette.responses import JSONResponse

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.apps import A2AStarletteApplication
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import AgentCapabilities, AgentCard, AgentSkill, Part, TextPart
from a2a.utils import new_task
from a2a.utils.message import get_message_text

from otel_setup import tracer

PORT, TOKEN = int(sys.argv[1]), sys.argv[2]
TRACER, _ = tracer('python-a2a03-server')
RUNNING: dict[str, asyncio.Event] = {}


class Executor(AgentExecutor):
    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task or new_task(context.message)
        if not context.current_task:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        text = get_message_text(context.message)
        if 'slow' in text:
            stop = RUNNING.setdefault(task.id, asyncio.Event())
            try:
                await asyncio.wait_for(stop.wait(), 30)
            except asyncio.TimeoutError:
                pass
            return
        await updater.add_artifact([Part(root=TextPart(text=f'python says: {text}'))], name='answer', last_chunk=True)
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        print(f'CANCELLED {context.task_id}', flush=True)
        RUNNING.setdefault(context.task_id, asyncio.Event()).set()
        await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


class TraceAndAuth(BaseHTTPMiddleware):
    """The bearer check, and a SERVER span in the caller's trace around every A2A request."""

    async def dispatch(self, request, call_next):
        if request.method == 'POST' and request.headers.get('authorization') != f'Bearer {TOKEN}':
            return JSONResponse({'jsonrpc': '2.0', 'id': None, 'error': {'code': -32600, 'message': 'unauthorized'}}, status_code=401)
        if request.method != 'POST':
            return await call_next(request)
        with TRACER.start_as_current_span('python a2a03 serve', context=extract(dict(request.headers)), kind=trace.SpanKind.SERVER):
            return await call_next(request)


url = f'http://127.0.0.1:{PORT}/'
card = AgentCard(
    name='py03',
    description='An agent on the Python a2a-sdk 0.3.',
    url=url,
    version='1.0.0',
    capabilities=AgentCapabilities(streaming=True),
    default_input_modes=['text/plain'],
    default_output_modes=['text/plain'],
    skills=[AgentSkill(id='echo', name='echo', description='Says it back.', tags=['echo'])],
)
handler = DefaultRequestHandler(agent_executor=Executor(), task_store=InMemoryTaskStore())
app = A2AStarletteApplication(agent_card=card, http_handler=handler).build()
app.add_middleware(TraceAndAuth)


async def main() -> None:
    server = uvicorn.Server(uvicorn.Config(app, host='127.0.0.1', port=PORT, log_level='warning'))
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    print(f'SERVED {url}', flush=True)
    await task


asyncio.run(main())
