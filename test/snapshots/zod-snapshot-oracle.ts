/**
 * The zod schema the snapshot's reader replaced (src/run/snapshot/snapshot-format.ts), kept here
 * as the oracle its test reads the reader against: what it refuses and how it words each refusal
 * must not change.
 */
import { z } from 'zod';
import { scopeSchema } from '../../src/core/scope.js';
import { ID_PATTERN, ID_RULE } from '../../src/run/ids.js';
import { KIND_NAMES } from '../../src/run/interruption-kinds.js';
import type { SuspendedRun } from '../../src/run/snapshot/run-snapshot.js';

const id = z.string().regex(ID_PATTERN, ID_RULE);
const count = z.number().int().nonnegative();
const usage = z.object({ inputTokens: count, outputTokens: count, cacheReadInputTokens: count.optional(), source: z.enum(['reported', 'estimated']) }).strict();
const cost = z.number().nonnegative().finite().nullable();
const figures = z.object({ own: usage, total: usage, costUsd: cost, totalCostUsd: cost }).strict();
const outcome = z.enum(['delegated', 'refused_depth', 'unknown_child', 'child_error', 'budget_exceeded', 'aborted', 'invalid_request', 'suspended']);
const delegation = z
  .object({ toolCallId: z.string(), child: z.string(), childRunId: id.nullable(), outcome, output: z.unknown().optional(), usage, costUsd: cost })
  .strict();
const toolCall = z.object({ id: z.string(), name: z.string(), arguments: z.string() }).strict();
const message = z
  .object({ role: z.enum(['user', 'assistant', 'tool']), content: z.string(), toolCalls: z.array(toolCall).optional(), toolCallId: z.string().optional() })
  .strict();
const place = z.object({ rootRunId: id, parentRunId: id.nullable(), depth: count, scope: scopeSchema.nullable() }).strict();
const amount = z.number().nonnegative().finite();
const refusal = z
  .object({ tenantId: z.string().min(1), limitName: z.enum(['maxTokens', 'maxCostUsd']), limit: amount, spent: amount, reserved: amount, requested: amount })
  .strict();
const wait = z.object({ id: z.string().min(1).max(300), kind: z.enum(KIND_NAMES), refusal: refusal.optional() }).strict();
const remoteWait = z
  .object({
    agent: z.string().min(1),
    taskId: z.string().min(1).max(256),
    contextId: z.string().min(1).max(256),
    interruptions: z.array(wait.extend({ remoteId: z.string().min(1).max(256).optional() }).strict()).min(1),
  })
  .strict();
const span = z.object({ traceId: z.string().regex(/^[0-9a-f]{32}$/), spanId: z.string().regex(/^[0-9a-f]{16}$/), flags: z.number().int().min(0).max(255) }).strict();

const suspendedRun: z.ZodType<SuspendedRun> = z.lazy(() =>
  z
    .object({
      runId: id,
      place: place.optional(),
      maxDepth: count.optional(),
      deadline: z.number().int().positive().optional(),
      // Empty only for a remote child's run, whose conversation its server keeps (refined below).
      messages: z.array(message),
      turns: count,
      figures,
      delegatedTo: z.array(z.string()),
      delegations: z.array(delegation).optional(),
      span: span.optional(),
      waits: z.union([
        z.object({ model: wait }).strict(),
        z
          .object({
            calls: z
              .array(
                z.union([
                  z.object({ callId: z.string(), result: z.string() }).strict(),
                  z.object({ callId: z.string(), wait }).strict(),
                  z.object({ callId: z.string(), child: suspendedRun }).strict(),
                ]),
              )
              .min(1),
          })
          .strict(),
        z.object({ remote: remoteWait }).strict(),
      ]),
    })
    .strict()
    .refine((run) => run.messages.length > 0 || 'remote' in run.waits, { message: 'a run that is not a remote child\'s holds at least one message', path: ['messages'] }),
) as z.ZodType<SuspendedRun>;

const givenAgain = z.object({ metricsCollector: z.literal(true).optional(), outputType: z.literal(true).optional() }).strict();
export const envelope = z.object({ version: z.literal(1), id: id.optional(), agent: z.string(), run: suspendedRun, seq: count.optional(), givenAgain: givenAgain.optional(), signature: z.string().regex(/^[0-9a-f]{64}$/).optional() }).strict();

/** The refusal the zod schema gave: its prettified issues, or undefined when it accepts. */
export function zodDefects(value: unknown): string | undefined {
  const parsed = envelope.safeParse(value);
  return parsed.success ? undefined : z.prettifyError(parsed.error);
}
