import { QUOTE_BYTES, targetOf, type RemoteHttp } from './http-client.js';
import { JsonRpcTransport } from './jsonrpc-transport.js';
import { isObject } from './rpc-envelope.js';
import { loadClientSdk, loadCoreSdk } from './sdk.js';
import { SdkTransport } from './sdk-transport.js';
import { TransportError, type A2ATransport } from './transport.js';
import { USAGE_LINEAGE_EXTENSION } from './wire.js';
import { modelVisibleText } from '../core/redact.js';

/** The most an agent card may weigh: a card is a page of JSON, not a download. */
const MAX_CARD_BYTES = 1024 * 1024;

/** What a remote child knows of its agent once it has read the card. */
export interface Connected {
  transport: A2ATransport;
  /** The card declares symfonic's usage-lineage extension. */
  extension: boolean;
  /** Where calls go, for the CLIENT span's server.address and server.port. */
  server: { address: string; port: number };
}

export interface ConnectSettings {
  url: string;
  /** The caller's headers, lower-cased: sent with the card request too. */
  headers: Readonly<Record<string, string>>;
  maxResponseBytes: number;
  /** False: never stream, even when the agent can. */
  stream: boolean;
  /** Take the SDK's client even for A2A 1.0 JSON-RPC (bench/remote.js --sdk-transport compares the two). */
  viaSdk?: boolean;
}

function serverOf(url: URL): { address: string; port: number } {
  return { address: url.hostname.replace(/^\[|\]$/g, ''), port: url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80 };
}

/** The card's A2A 1.0 JSON-RPC endpoint, if it offers one. */
function jsonRpc1(card: Record<string, unknown>): URL | undefined {
  const interfaces = Array.isArray(card.supportedInterfaces) ? card.supportedInterfaces : [];
  for (const i of interfaces) {
    if (!isObject(i) || i.protocolBinding !== 'JSONRPC' || typeof i.protocolVersion !== 'string' || !/^1\./.test(i.protocolVersion) || typeof i.url !== 'string') continue;
    try {
      return new URL(i.url);
    } catch {
      continue;
    }
  }
  return undefined;
}

async function readCard(http: RemoteHttp, s: ConnectSettings): Promise<Record<string, unknown>> {
  // Resolved as the A2A SDK resolves it: relative to the agent's URL.
  const cardUrl = new URL('.well-known/agent-card.json', s.url);
  const answer = await http.exchange(targetOf(cardUrl), 'GET', { ...s.headers, 'a2a-version': '1.0', accept: 'application/json' }, undefined, AbortSignal.timeout(30_000), MAX_CARD_BYTES);
  if (answer.status < 200 || answer.status >= 300) {
    throw new TransportError(`its agent card at ${cardUrl.origin}${cardUrl.pathname} could not be read: HTTP ${answer.status}: ${modelVisibleText(answer.text.slice(0, QUOTE_BYTES))}`, answer.status);
  }
  try {
    const card: unknown = JSON.parse(answer.text);
    if (isObject(card)) return card;
  } catch {
    // refused below
  }
  throw new TransportError(`its agent card at ${cardUrl.origin}${cardUrl.pathname} is not a JSON object`);
}

/**
 * Reads the remote's card and settles how to reach it: A2A 1.0 over JSON-RPC directly when the
 * card offers it, else the A2A SDK's client (0.3 agents, REST-only agents); streaming when the
 * card says the agent streams (unless the caller said never).
 */
export async function connect(http: RemoteHttp, s: ConnectSettings): Promise<Connected> {
  const card = await readCard(http, s);
  const capabilities = isObject(card.capabilities) ? card.capabilities : {};
  const streaming = s.stream && capabilities.streaming === true;
  const extension = Array.isArray(capabilities.extensions) && capabilities.extensions.some((e) => isObject(e) && e.uri === USAGE_LINEAGE_EXTENSION);
  const endpoint = s.viaSdk ? undefined : jsonRpc1(card);
  if (endpoint !== undefined) {
    return { transport: new JsonRpcTransport(http, targetOf(endpoint), streaming, s.maxResponseBytes), extension, server: serverOf(endpoint) };
  }
  const [sdk, core] = await Promise.all([loadClientSdk(), loadCoreSdk()]);
  const fetchImpl = http.fetchFor(s.maxResponseBytes);
  const cardFetch: typeof fetch = (input, init) => fetchImpl(input, { ...init, headers: { ...s.headers, ...Object.fromEntries(new Headers(init?.headers)) } });
  const factory = new sdk.ClientFactory({
    transports: [new sdk.JsonRpcTransportFactory({ legacyCompat: { enabled: true }, fetchImpl }), new sdk.RestTransportFactory({ legacyCompat: { enabled: true }, fetchImpl })],
    preferredTransports: ['JSONRPC'],
    cardResolver: new sdk.DefaultAgentCardResolver({ fetchImpl: cardFetch, legacyCompat: { enabled: true } }),
  });
  const client = await factory.createFromUrl(s.url);
  const url = typeof card.url === 'string' ? card.url : s.url;
  return { transport: new SdkTransport(client, core, streaming), extension, server: serverOf(new URL(url)) };
}
