import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, SymfonicAgent } from '../../src/index.js';
import { startTelemetry } from '../../src/telemetry/index.js';
import { recordTelemetry, scriptedModel, type TelemetryRecording } from '../../src/testing/index.js';

describe('a second SDK refused', () => {
  let rec: TelemetryRecording | undefined;
  afterEach(async () => {
    await rec?.shutdown();
    rec = undefined;
  });

  it('startTelemetry refused while recordTelemetry runs leaves the recording working', async () => {
    rec = recordTelemetry();
    expect(() => startTelemetry({ otlpEndpoint: 'http://127.0.0.1:9', exportTimeoutMs: 200 })).toThrow(ConfigurationError);
    await new SymfonicAgent({ name: 'a', modelProvider: scriptedModel(['ok']) }).run('hi');
    expect(rec.spans().map((s) => s.name)).toContain('invoke_agent a');
  });

  it('a second recordTelemetry refused leaves the first recording working', async () => {
    rec = recordTelemetry();
    expect(() => recordTelemetry()).toThrow(/already recording/);
    await new SymfonicAgent({ name: 'b', modelProvider: scriptedModel(['ok']) }).run('hi');
    expect(rec.spans().map((s) => s.name)).toContain('invoke_agent b');
  });

  it('after shutdown the globals are free for the next SDK', async () => {
    rec = recordTelemetry();
    await rec.shutdown();
    rec = recordTelemetry();
    await new SymfonicAgent({ name: 'c', modelProvider: scriptedModel(['ok']) }).run('hi');
    expect(rec.spans()).toHaveLength(2);
  });

  it("one agent's spans follow each SDK registered after the last, with none between them", async () => {
    const agent = new SymfonicAgent({ name: 'd', modelProvider: scriptedModel(() => 'ok') });
    rec = recordTelemetry();
    await agent.run('hi');
    const first = rec;
    expect(first.spans()).toHaveLength(2);
    await first.shutdown();
    await agent.run('hi');
    rec = recordTelemetry();
    await agent.run('hi');
    expect(rec.spans().map((s) => s.name)).toEqual(['chat scripted-model', 'invoke_agent d']);
    expect(first.spans()).toHaveLength(0);
  });
});
