import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SubAgent, SubAgentSpec, SymfonicAgent, defineTool } from '../../src/index.js';
import { serveAgent, type ServedAgent } from '../../src/remote/index.js';
import { scriptedModel } from '../../src/testing/index.js';
import { bearer } from './helpers.js';

let served: ServedAgent | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

describe('the agent card of a served router', () => {
  it("lists its children, in roster order with when to use them, and its own tools as skills; not the delegation tools", async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Looks a term up.', input: z.object({ term: z.string() }), execute: () => 'x' });
    const router = new SymfonicAgent({
      name: 'router',
      description: 'Routes questions.',
      modelProvider: scriptedModel([]),
      tools: [lookup],
      subAgents: [
        new SubAgentSpec({ name: 'researcher', description: 'Finds sources.', whenToUse: 'for facts' }),
        new SubAgent({ name: 'writer', agent: { run: async () => ({ finalResponse: '' }) }, description: 'Writes prose.' }),
      ],
    });
    served = await serveAgent(router, { authenticate: bearer() });
    const card = (await (await fetch(`${served.url}/.well-known/agent-card.json`)).json()) as { name: string; description: string; skills: { id: string; description: string }[] };
    expect(card.name).toBe('router');
    expect(card.skills.map((s) => s.id)).toEqual(['researcher', 'writer', 'lookup']);
    expect(card.skills[0]!.description).toBe('Finds sources. When to use: for facts');
    expect(card.skills.map((s) => s.id)).not.toContain('run_agent');
  });
});

/**
 * How an A2A 0.3 reader tells a security scheme's kind (0.3's SecurityScheme, a union told apart
 * by `type`; a2a-sdk 0.3's model gives only mutualTLS a default type, so an entry without one
 * reads as mutual TLS): the kind and, for http, the scheme.
 */
function legacySchemeKind(s: Record<string, unknown>): string {
  const type = s.type ?? 'mutualTLS';
  return type === 'http' && typeof s.scheme === 'string' ? `http ${s.scheme.toLowerCase()}` : String(type);
}

/** A2A 1.0's SecurityScheme oneof: exactly one of these is set. */
const V1_SCHEME_KINDS = ['apiKeySecurityScheme', 'httpAuthSecurityScheme', 'oauth2SecurityScheme', 'openIdConnectSecurityScheme', 'mtlsSecurityScheme'];

describe('the cards every peer reads', () => {
  const read = async (url: string, version?: string) =>
    (await (await fetch(`${url}/.well-known/agent-card.json`, { headers: version ? { 'a2a-version': version } : {} })).json()) as Record<string, any>;

  it('A2A 1.0: interfaces for 1.0 and 0.3, streaming, bearer security, tagged skills, the usage-lineage extension', async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel([]) }), { authenticate: bearer() });
    const card = await read(served.url, '1.0');
    expect(card.supportedInterfaces).toEqual([
      { url: `${served.url}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: `${served.url}/`, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ]);
    expect(card.capabilities).toMatchObject({ streaming: true, pushNotifications: false, extensions: [{ uri: 'https://symfonic.dev/a2a/ext/usage-lineage/v1', required: false }] });
    expect(card.securitySchemes).toEqual({ bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', description: expect.any(String) } } });
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
    expect(card.skills).toEqual([expect.objectContaining({ id: 'solo', tags: ['agent', 'solo'] })]);
    expect(card.url).toBeUndefined();
  });

  it('A2A 0.3: url, protocolVersion, preferredTransport, security in 0.3 words', async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel([]) }), { authenticate: bearer() });
    const card = await read(served.url, '0.3');
    expect(card).toMatchObject({ url: `${served.url}/`, protocolVersion: '0.3.0', preferredTransport: 'JSONRPC', security: [{ bearer: [] }], securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } });
    expect(card.supportedInterfaces).toBeUndefined();
    expect(card.skills[0].tags).toEqual(['agent', 'solo']);
  });

  it('without A2A-Version (a 0.3 client sends none): both, each reader taking its own fields', async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel([]) }), { authenticate: bearer() });
    const card = await read(served.url);
    expect(card).toMatchObject({ url: `${served.url}/`, protocolVersion: '0.3.0', supportedInterfaces: [expect.objectContaining({ protocolVersion: '1.0' }), expect.anything()] });
    expect(card.security).toEqual([{ bearer: [] }]);
    expect(card.securityRequirements).toEqual([{ schemes: { bearer: { list: [] } } }]);
  });

  it("each reader finds bearer authentication in the card it reads: 0.3's scheme by its type, 1.0's by its oneof", async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel([]) }), { authenticate: bearer() });
    for (const version of [undefined, '0.3']) {
      const card = await read(served.url, version);
      for (const requirement of card.security) for (const name of Object.keys(requirement)) expect(legacySchemeKind(card.securitySchemes[name]), `${version ?? 'no header'}: ${name}`).toBe('http bearer');
    }
    for (const version of [undefined, '1.0']) {
      const card = await read(served.url, version);
      for (const requirement of card.securityRequirements) {
        for (const name of Object.keys(requirement.schemes)) {
          const scheme = card.securitySchemes[name];
          expect(V1_SCHEME_KINDS.filter((k) => scheme[k] !== undefined)).toEqual(['httpAuthSecurityScheme']);
          expect(scheme.httpAuthSecurityScheme.scheme).toBe('Bearer');
        }
      }
    }
  });

  it('advertises publicUrl, the address callers reach, instead of the bound one', async () => {
    served = await serveAgent(new SymfonicAgent({ name: 'solo', modelProvider: scriptedModel([]) }), { authenticate: bearer(), publicUrl: 'https://agents.example.com/solo' });
    expect((await read(served.url, '1.0')).supportedInterfaces[0].url).toBe('https://agents.example.com/solo');
    expect((await read(served.url, '0.3')).url).toBe('https://agents.example.com/solo');
    await expect(serveAgent(new SymfonicAgent({ name: 'x', modelProvider: scriptedModel([]) }), { authenticate: bearer(), publicUrl: 'ftp://x' })).rejects.toThrow(/publicUrl must be an http\(s\) URL/);
  });
});
