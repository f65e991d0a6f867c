/**
 * JSON-RPC 2.0 as the A2A binding uses it: the envelope of a request read and checked before any
 * method runs, and error answers that echo the request's id. The codes are JSON-RPC's own (a body
 * that is not JSON, an envelope that is not a request, an unknown method, bad parameters) and
 * A2A's (-32001 to -32009).
 */
import { nestedDeeperThan } from './json-depth.js';

export type RpcId = string | number | null;

/** The deepest params a request may nest (objects and arrays): far past any A2A message, short of any stack. */
export const MAX_PARAMS_DEPTH = 64;

export interface RpcRequest {
  id: RpcId;
  method: string;
  params: Record<string, unknown>;
}

export const RPC_CODE = Object.freeze({
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  versionNotSupported: -32009,
});

/** A request the server refuses before running anything, answered with its code and a message. */
export class RpcRefusal {
  constructor(
    readonly id: RpcId,
    readonly code: number,
    readonly message: string,
  ) {}

  json(): string {
    return rpcErrorJson(this.id, this.code, this.message);
  }
}

export function rpcErrorJson(id: RpcId, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function validId(id: unknown): id is RpcId {
  return id === null || typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/**
 * The request in `body`, or the refusal to answer with: -32700 for text that is not JSON, -32600
 * for JSON that is not a request object (a batch, a version other than "2.0", a missing method,
 * an id that is neither a string, an integer nor null), -32602 for params that are not an object
 * or nest deeper than MAX_PARAMS_DEPTH.
 * A refusal echoes the request's id whenever the id itself was readable.
 */
export function readRpc(body: string): RpcRequest | RpcRefusal {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return new RpcRefusal(null, RPC_CODE.parseError, `the body is not JSON (${(error as Error).message}); send one JSON-RPC 2.0 request object`);
  }
  if (!isObject(value)) {
    return new RpcRefusal(null, RPC_CODE.invalidRequest, Array.isArray(value) ? 'batch requests are not supported; send one request object' : 'a JSON-RPC request is an object');
  }
  const id = 'id' in value ? value.id : null;
  if (!validId(id)) return new RpcRefusal(null, RPC_CODE.invalidRequest, 'the request id must be a string, an integer or null');
  if (value.jsonrpc !== '2.0') return new RpcRefusal(id, RPC_CODE.invalidRequest, 'jsonrpc must be "2.0"');
  if (typeof value.method !== 'string' || value.method === '') return new RpcRefusal(id, RPC_CODE.invalidRequest, 'the request names no method');
  const params = value.params ?? {};
  if (!isObject(params)) return new RpcRefusal(id, RPC_CODE.invalidParams, 'params must be an object');
  if (nestedDeeperThan(params, MAX_PARAMS_DEPTH)) {
    return new RpcRefusal(id, RPC_CODE.invalidParams, `params are nested more than ${MAX_PARAMS_DEPTH} levels deep (objects and arrays), the most this agent reads: send flatter data`);
  }
  return { id, method: value.method, params };
}

/** A request the handler refuses with an A2A error: the binding answers it with `code` and the message. */
export class A2AProblem extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'A2AProblem';
  }
}
