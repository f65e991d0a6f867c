import { ATTR } from '../observability/attributes.js';
import type { CallTicket, CallEnd } from './accounting.js';

/** Metric attributes shared by every call on one provider and model pair. */
export interface CallAttributes {
  readonly duration: Record<string, string>;
  readonly input: Record<string, string>;
  readonly output: Record<string, string>;
}

const MAX_CACHED_ATTRIBUTE_SETS = 256;

/**
 * A call's metric attributes, built once per provider and model pair rather than per call:
 * allocating them (two by spreading) was a measurable share of a delegated hop (see
 * docs/benchmarks.md). Bounded, since response model names come from providers.
 */
export class CallAttributeCache {
  private readonly sets = new Map<string, CallAttributes>();
  private last: { providerName: string; requestModel: string; responseModel: string | undefined; attributes: CallAttributes } | undefined;

  get(ticket: CallTicket, ended: CallEnd): CallAttributes {
    const providerName = ticket.call.providerName;
    const requestModel = ticket.call.modelName;
    const responseModel = ended.responseModel;
    // Most processes call one model over and over: the last set answers without a key string.
    const last = this.last;
    if (last !== undefined && last.providerName === providerName && last.requestModel === requestModel && last.responseModel === responseModel) {
      return last.attributes;
    }
    const key = providerName + '\u0000' + requestModel + (responseModel === undefined ? '\u0001' : '\u0000' + responseModel);
    let a = this.sets.get(key);
    if (a === undefined) {
      const duration: Record<string, string> = {
        [ATTR.operationName]: 'chat',
        [ATTR.providerName]: providerName,
        [ATTR.requestModel]: requestModel,
      };
      if (responseModel !== undefined) duration[ATTR.responseModel] = responseModel;
      a = { duration, input: { ...duration, [ATTR.tokenType]: 'input' }, output: { ...duration, [ATTR.tokenType]: 'output' } };
      if (this.sets.size >= MAX_CACHED_ATTRIBUTE_SETS) this.sets.clear();
      this.sets.set(key, a);
    }
    this.last = { providerName, requestModel, responseModel, attributes: a };
    return a;
  }
}

/** Attributes of a failed call: rare, so built each time. */
export function failedCallAttributes(ticket: CallTicket, ended: CallEnd): Record<string, string> {
  const attrs: Record<string, string> = {
    [ATTR.operationName]: 'chat',
    [ATTR.providerName]: ticket.call.providerName,
    [ATTR.requestModel]: ticket.call.modelName,
  };
  if (ended.errorType !== undefined) attrs[ATTR.errorType] = ended.errorType;
  return attrs;
}
