import type { SendMessageRequest } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import type { RemoteTaskReader } from './remote-task.js';
import type { CoreSdk } from './sdk.js';
import type { A2ATransport, RemoteSend } from './transport.js';
import { USAGE_LINEAGE_EXTENSION } from './wire.js';

/**
 * Every interface remoteChild does not speak itself (an A2A 0.3 agent, an agent offering only
 * REST), through the A2A SDK's client: it reads the card, picks the interface and translates
 * versions. What comes back is turned into A2A 1.0 JSON for the same RemoteTaskReader.
 */
export class SdkTransport implements A2ATransport {
  constructor(
    private readonly client: Client,
    private readonly core: CoreSdk,
    readonly streaming: boolean,
  ) {}

  private request(call: RemoteSend): SendMessageRequest {
    return {
      tenant: '',
      message: {
        messageId: call.resume === undefined ? call.messageId : `${call.messageId}:${call.resume.taskId}:${Date.now()}`,
        contextId: call.contextId,
        taskId: call.resume?.taskId ?? '',
        role: this.core.Role.ROLE_USER,
        parts: [
          call.resume === undefined
            ? { content: { $case: 'text', value: call.task }, mediaType: 'text/plain', filename: '', metadata: undefined }
            : { content: { $case: 'data', value: { decisions: call.resume.decisions } }, mediaType: 'application/json', filename: '', metadata: undefined },
        ],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: { acceptedOutputModes: ['text/plain', 'application/json'], taskPushNotificationConfig: undefined, returnImmediately: false, historyLength: 0 },
      metadata: call.events ? { [USAGE_LINEAGE_EXTENSION]: { events: true } } : undefined,
    };
  }

  /** The call's headers, with the extension activation also under A2A 0.3's name for it. */
  private static parameters(headers: Readonly<Record<string, string>>): Record<string, string> {
    const out = { ...headers };
    if (out['a2a-extensions'] !== undefined) out['x-a2a-extensions'] = out['a2a-extensions'];
    return out;
  }

  async send(call: RemoteSend, reader: RemoteTaskReader): Promise<void> {
    const options = { signal: call.signal.signal, serviceParameters: SdkTransport.parameters(call.headers) };
    // The SDK's client sends before it resolves anything: from here the remote may be working.
    call.onDispatched();
    if (!this.streaming) {
      const result = await this.client.sendMessage(this.request(call), options);
      reader.read('messageId' in result ? { message: this.core.Message.toJSON(result) } : { task: this.core.Task.toJSON(result) });
      return;
    }
    for await (const event of this.client.sendMessageStream(this.request(call), options)) {
      reader.read(this.core.StreamResponse.toJSON(event));
      if (reader.done) break;
    }
  }

  async cancel(reader: RemoteTaskReader, _contextId: string, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<void> {
    if (reader.taskId === undefined) return;
    const task = await this.client.cancelTask({ tenant: '', id: reader.taskId, metadata: undefined }, { signal, serviceParameters: SdkTransport.parameters(headers) });
    reader.readTask(this.core.Task.toJSON(task) as Record<string, unknown>);
  }

  close(): void {}
}
