/**
 * README's human-in-the-loop tree: desk → support → billing, whose refund of more than $100
 * waits for a person. Fresh agents every call (what another process builds), with the options
 * under test; `refunds` records every refund that ran, and under which tenant.
 */
import { z } from 'zod';
import { SubAgent, SymfonicAgent, defineTool, type ModelRequest, type SymfonicAgentOptions } from '../../src/index.js';
import { scriptedModel } from '../../src/testing/index.js';

export type SnapshotOptionsOf = Pick<SymfonicAgentOptions, 'snapshotKey' | 'snapshotEncryptionKey' | 'unsignedSnapshots' | 'resumeStore' | 'logger'>;

const read = (r: ModelRequest) => (r.messages.at(-1)?.role === 'tool' ? r.messages.at(-1)?.content : undefined);

export function refundDesk(options: SnapshotOptionsOf = {}, refunds: { amountUsd: number; tenantId: string }[] = []) {
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds an order.',
    input: z.object({ orderId: z.string(), amountUsd: z.number() }),
    needsApproval: (input) => input.amountUsd > 100,
    execute: ({ orderId, amountUsd }, ctx) => {
      refunds.push({ amountUsd, tenantId: ctx.scope?.tenantId ?? '' });
      return `refunded $${amountUsd} on ${orderId}`;
    },
  });
  const billing = new SymfonicAgent({
    name: 'billing',
    tools: [refund],
    modelProvider: scriptedModel((r) => (read(r) !== undefined ? `Billing: ${read(r)}` : { toolCalls: [{ name: 'refund', arguments: { orderId: 'A-17', amountUsd: 250 } }] })),
  });
  const support = new SymfonicAgent({
    name: 'support',
    subAgents: [new SubAgent({ name: 'billing', agent: billing, description: 'Refunds.' })],
    modelProvider: scriptedModel((r) => (read(r) !== undefined ? `Support: ${read(r)}` : { toolCalls: [{ name: 'run_agent', arguments: { name: 'billing', task: 'Refund A-17, $250.' } }] })),
  });
  const desk = new SymfonicAgent({
    name: 'desk',
    subAgents: [new SubAgent({ name: 'support', agent: support, description: 'Support.' })],
    modelProvider: scriptedModel((r) => (read(r) !== undefined ? `Desk: ${read(r)}` : { toolCalls: [{ name: 'run_agent', arguments: { name: 'support', task: 'Customer 9 wants A-17 refunded.' } }] })),
    ...options,
  });
  return { desk, refunds };
}

export const scope = { tenantId: 'acme', userId: 'u-9' } as const;

/** The stored snapshot as a client that edits it would: tenant acme → globex, the refund 250 → 25,000. */
export function forged(text: string): string {
  const out = text.replace('"tenantId":"acme"', '"tenantId":"globex"').replace('\\"amountUsd\\":250', '\\"amountUsd\\":25000');
  if (out === text || !out.includes('globex') || !out.includes('25000')) throw new Error('the forgery did not apply: the snapshot text is not as expected');
  return out;
}
